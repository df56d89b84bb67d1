-- One compensation request with what an approver needs beside it: $1 request id. The target
-- (dead letter or mismatch) in a few columns, and what is still refundable for its payment
-- (redrive.refundable_cents already subtracts this request while it is open).
SELECT c.id, c.target_type, c.target_id, c.kind, c.payment_ref, c.amount_cents, c.currency,
       c.status, c.requires_approval, c.requested_by, c.requested_at, c.reason, c.ticket,
       c.version, c.decided_by, c.decision, c.decided_at, c.decision_reason,
       refundable_cents(c.payment_ref) AS refundable_cents,
       d.queue AS dl_queue, d.kind AS dl_kind, d.status AS dl_status,
       d.error_class AS dl_error_class, d.error_code AS dl_error_code,
       d.last_error AS dl_last_error, d.attempts AS dl_attempts, d.dead_at AS dl_dead_at,
       m.kind AS m_kind, m.internal_amount_cents AS m_internal_amount_cents,
       m.external_amount_cents AS m_external_amount_cents,
       m.internal_currency AS m_internal_currency, m.external_currency AS m_external_currency,
       m.internal_status AS m_internal_status, m.external_status AS m_external_status,
       m.status AS m_status, m.detected_at AS m_detected_at, m.order_ref AS m_order_ref
  FROM compensation_list c
  LEFT JOIN dead_letter_list d ON c.target_type = 'dead_letter' AND d.id = c.target_id
  LEFT JOIN mismatch_list m ON c.target_type = 'mismatch' AND m.id = c.target_id
 WHERE c.id = $1::bigint
