-- What a compensation from one reconciliation mismatch would act on: $1 mismatch id. The
-- mismatch (version, status, kind), its payment, order and customer (the customer as the
-- payment's dead letters name it, else as our side's record in the mismatch names it), both
-- provider charges side by side (mismatch_charge_list: the charge our ledger recorded, and the
-- other one; for duplicate_external the duplicate), what
-- it would refund by default (suggested_minor: the duplicate charge, or the difference of an
-- amount mismatch), the currency of the request, the most it may be (maximum_minor: the default,
-- capped by redrive.refundable_minor for the payment and the charge), the currency's approval
-- threshold and what the payment's open and executed compensations add up to
-- (docs/domain.md "Four eyes per payment"), and the payment's open request, if any. All amounts
-- in minor units.
SELECT m.id, m.version, m.status, m.kind, m.payment_ref,
       coalesce(m.order_ref, party.order_ref) AS order_ref,
       coalesce(party.customer, m.internal_record::jsonb ->> 'customer') AS customer,
       m.internal_amount_minor AS internal_minor, m.external_amount_minor AS external_minor,
       m.internal_currency, m.external_currency,
       ch.original_charge_ref, ch.original_charged_minor, ch.original_refunded_minor,
       ch.original_currency, ch.original_charged_at,
       ch.other_charge_ref, ch.other_charged_minor, ch.other_refunded_minor, ch.other_currency,
       ch.other_charged_at, ch.suggested_minor, x.currency,
       greatest(least(ch.suggested_minor, refundable_minor(m.payment_ref),
                      refundable_minor(m.payment_ref, coalesce(m.external_charge_ref, p.charge_ref))),
                0) AS maximum_minor,
       approval_threshold_minor(x.currency) AS threshold_minor,
       compensated_minor(m.payment_ref) AS compensated_minor,
       (SELECT c.id FROM compensation_list c
         WHERE c.payment_ref = m.payment_ref
           AND c.status IN ('pending_approval', 'approved', 'executing')
         ORDER BY c.id LIMIT 1) AS open_request
  FROM mismatch_list m
  LEFT JOIN mismatch_charge_list ch ON ch.mismatch_id = m.id
  LEFT JOIN payment_list p ON p.payment_ref = m.payment_ref
  CROSS JOIN LATERAL (SELECT CASE WHEN m.kind = 'duplicate_external'
                                  THEN coalesce(ch.other_currency, m.external_currency)
                                  ELSE m.external_currency END AS currency) x
  LEFT JOIN LATERAL (SELECT dd.payload_text::jsonb ->> 'order_id' AS order_ref,
                            dd.payload_text::jsonb ->> 'customer' AS customer
                       FROM dead_letter_detail dd
                      WHERE dd.entity_id = m.payment_ref AND dd.payload_text IS NOT NULL
                      ORDER BY (dd.payload_text::jsonb ? 'customer') DESC, dd.id
                      LIMIT 1) party ON true
 WHERE m.id = $1::bigint
