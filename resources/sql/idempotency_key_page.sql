-- A keyset page of idempotency keys, most recently changed first; $1 scopes, $2 states (NULL =
-- any), keyset $3 updated_at, $4 scope, $5 key; $6 rows.
SELECT k.scope, k.key, k.state, k.locked_by, k.locked_until, k.job_ref, k.request_hash,
       k.result_text, k.error_message, k.conflict_count, k.created_at, k.updated_at,
       k.expires_at, k.version, k.stuck
  FROM idempotency_key_list k
 WHERE ($1::text[] IS NULL OR k.scope = ANY ($1::text[]))
   AND ($2::text[] IS NULL OR k.state = ANY ($2::text[]))
   AND ($3::timestamptz IS NULL
        OR (k.updated_at, k.scope, k.key) < ($3::timestamptz, $4::text, $5::text))
 ORDER BY k.updated_at DESC, k.scope DESC, k.key DESC
 LIMIT $6
