-- One compensation request with what an approver needs beside it: $1 request id. The target
-- (dead letter or mismatch) in a few columns, and what is still refundable for its payment
-- (redrive.refundable_minor already subtracts this request while it is open), the currency's
-- approval threshold and what the payment's open and executed compensations add up to
-- (docs/domain.md "Four eyes per payment"), the provider charge it acts on, and the payment's
-- order and customer (a mismatch's order, or as the payment's dead letters' payloads name them;
-- a mismatch's customer else as our side's record in the mismatch names it).
SELECT c.id, c.target_type, c.target_id, c.kind, c.payment_ref, c.amount_minor, c.currency,
       c.status, c.requires_approval, c.requested_by, c.requested_at, c.reason, c.ticket,
       c.version, c.decided_by, c.decision, c.decided_at, c.decision_reason,
       refundable_minor(c.payment_ref) AS refundable_minor,
       d.queue AS dl_queue, d.kind AS dl_kind, d.status AS dl_status,
       d.error_class AS dl_error_class, d.error_code AS dl_error_code,
       d.last_error AS dl_last_error, d.attempts AS dl_attempts, d.dead_at AS dl_dead_at,
       m.kind AS m_kind, m.internal_amount_minor AS m_internal_amount_minor,
       m.external_amount_minor AS m_external_amount_minor,
       m.internal_currency AS m_internal_currency, m.external_currency AS m_external_currency,
       m.internal_status AS m_internal_status, m.external_status AS m_external_status,
       m.status AS m_status, m.detected_at AS m_detected_at, m.order_ref AS m_order_ref,
       c.charge_ref, approval_threshold_minor(c.currency) AS threshold_minor,
       compensated_minor(c.payment_ref) AS compensated_minor,
       coalesce(m.order_ref, party.order_ref) AS order_ref,
       coalesce(party.customer, m.internal_record::jsonb ->> 'customer') AS customer
  FROM compensation_list c
  LEFT JOIN dead_letter_list d ON c.target_type = 'dead_letter' AND d.id = c.target_id
  LEFT JOIN mismatch_list m ON c.target_type = 'mismatch' AND m.id = c.target_id
  LEFT JOIN LATERAL (SELECT dd.payload_text::jsonb ->> 'order_id' AS order_ref,
                            dd.payload_text::jsonb ->> 'customer' AS customer
                       FROM dead_letter_detail dd
                      WHERE dd.entity_id = c.payment_ref AND dd.payload_text IS NOT NULL
                      ORDER BY (c.target_type = 'dead_letter' AND dd.id = c.target_id) DESC,
                               (dd.payload_text::jsonb ? 'customer') DESC, dd.id
                      LIMIT 1) party ON true
 WHERE c.id = $1::bigint
