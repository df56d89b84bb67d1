-- A keyset page of reconciliation mismatches, newest first, our side next to the provider's;
-- $1 kinds, $2 statuses, $3 run (NULL = any); keyset $4 detected_at, $5 id; $6 rows.
SELECT m.id, m.run_id, m.kind, m.payment_ref, m.order_ref, m.internal_amount_minor,
       m.external_amount_minor, m.internal_currency, m.external_currency, m.internal_status,
       m.external_status, m.internal_record, m.external_record, m.status, m.detected_at,
       m.version, m.resolution, m.resolved_by
  FROM mismatch_list m
 WHERE ($1::text[] IS NULL OR m.kind = ANY ($1::text[]))
   AND ($2::text[] IS NULL OR m.status = ANY ($2::text[]))
   AND ($3::bigint IS NULL OR m.run_id = $3::bigint)
   AND ($4::timestamptz IS NULL OR (m.detected_at, m.id) < ($4::timestamptz, $5::bigint))
 ORDER BY m.detected_at DESC, m.id DESC
 LIMIT $6
