-- What a compensation for one dead letter would act on: $1 dead letter id. The payment its job
-- changed, what was charged and already refunded (cents), and the approval threshold.
SELECT d.id, d.version, d.status, d.kind, d.entity_id AS payment_ref, p.charge_ref,
       p.charged_cents, p.refunded_cents, p.currency,
       greatest(coalesce(p.charged_cents, 0) - coalesce(p.refunded_cents, 0), 0)
           AS refundable_cents,
       (SELECT s.compensation_approval_cents FROM settings s LIMIT 1) AS approval_cents
  FROM dead_letter_detail d
  LEFT JOIN payment_list p ON p.payment_ref = d.entity_id
 WHERE d.id = $1::bigint
