-- What a compensation for one dead letter would act on: $1 dead letter id. The payment its job
-- changed, what was charged and already refunded (minor units), what is still refundable
-- (redrive.refundable_minor for the payment and its charge, docs/domain.md "Refundable"), and
-- approval_minor: the amount from which this request waits for a second person, i.e. the
-- currency's threshold less what the payment's open and executed compensations already add up
-- to (docs/domain.md "Four eyes per payment"); threshold_minor the currency's threshold,
-- compensated_minor what those compensations add up to, open_request the payment's open request;
-- order_ref and customer as the dead letter's payload names them (order_id, customer).
-- charged_minor and refunded_minor are the payment's charge as payment_charge_list gives it
-- (its is_primary row), so the site's payment_list may name its amount columns either way
-- (docs/domain.md, "The payments contract").
SELECT d.id, d.version, d.status, d.kind, d.entity_id AS payment_ref, p.charge_ref,
       ch.charged_minor, ch.refunded_minor, p.currency,
       greatest(least(refundable_minor(d.entity_id), refundable_minor(d.entity_id, p.charge_ref)),
                0) AS refundable_minor,
       greatest(approval_threshold_minor(p.currency) - compensated_minor(d.entity_id), 0)
           AS approval_minor,
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
  LEFT JOIN LATERAL (SELECT pc.charged_minor, pc.refunded_minor
                       FROM payment_charge_list pc
                      WHERE pc.payment_ref = p.payment_ref AND pc.charge_ref = p.charge_ref
                      ORDER BY pc.is_primary DESC
                      LIMIT 1) ch ON true
 WHERE d.id = $1::bigint
