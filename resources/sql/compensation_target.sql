-- What a compensation for one dead letter would act on: $1 dead letter id. The payment its job
-- changed, what was charged and already refunded (minor units), what is still refundable
-- (redrive.refundable_minor for the payment and its charge, docs/domain.md "Refundable"), and
-- approval_cents: the amount from which this request waits for a second person, i.e. the
-- currency's threshold less what the payment's open and executed compensations already add up
-- to (docs/domain.md "Four eyes per payment"); threshold_minor the currency's threshold,
-- compensated_minor what those compensations add up to, open_request the payment's open request;
-- order_ref and customer as the dead letter's payload names them (order_id, customer).
SELECT d.id, d.version, d.status, d.kind, d.entity_id AS payment_ref, p.charge_ref,
       p.charged_cents, p.refunded_cents, p.currency,
       greatest(least(refundable_minor(d.entity_id), refundable_minor(d.entity_id, p.charge_ref)),
                0) AS refundable_cents,
       greatest(approval_threshold_minor(p.currency) - compensated_minor(d.entity_id), 0)
           AS approval_cents,
       approval_threshold_minor(p.currency) AS threshold_minor,
       compensated_minor(d.entity_id) AS compensated_minor,
       (SELECT c.id FROM compensation_list c
         WHERE c.payment_ref = d.entity_id
           AND c.status IN ('pending_approval', 'approved', 'executing')
         ORDER BY c.id LIMIT 1) AS open_request,
       CASE WHEN d.payload_text IS NOT NULL THEN d.payload_text::jsonb ->> 'order_id' END
           AS order_ref,
       CASE WHEN d.payload_text IS NOT NULL THEN d.payload_text::jsonb ->> 'customer' END
           AS customer
  FROM dead_letter_detail d
  LEFT JOIN payment_list p ON p.payment_ref = d.entity_id
 WHERE d.id = $1::bigint
