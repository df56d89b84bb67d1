-- Reconciliation mismatches for the payment a dead letter's job acted on (its ordering key).
SELECT m.id, m.kind, m.payment_ref, m.internal_amount_minor, m.external_amount_minor,
       m.internal_currency, m.external_currency, m.internal_status, m.external_status,
       m.status, m.detected_at
  FROM mismatch_list m
  JOIN dead_letter_detail d ON m.payment_ref = d.entity_id
 WHERE d.id = $1
 ORDER BY m.detected_at DESC, m.id DESC
