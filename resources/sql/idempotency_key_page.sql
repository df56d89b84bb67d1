-- A keyset page of idempotency keys, most recently changed first; $1 scopes, $2 states (NULL =
-- any), $3 text the key contains, taken literally (NULL = any), keyset $4 updated_at, $5 scope,
-- $6 key; $7 rows. The console's keys list pages through a frozen pass instead
-- (idempotency_key_keys.sql, docs/architecture.md#paging-a-frozen-pass), since updated_at moves
-- whenever a key changes; this one serves a single page read from scratch.
SELECT k.scope, k.key, k.state, k.locked_by, k.locked_until, k.job_ref, k.request_hash,
       k.result_text, k.error_message, k.conflict_count, k.created_at, k.updated_at,
       k.expires_at, k.version, k.stuck
  FROM idempotency_key_list k
 WHERE ($1::text[] IS NULL OR k.scope = ANY ($1::text[]))
   AND ($2::text[] IS NULL OR k.state = ANY ($2::text[]))
   AND ($3::text IS NULL OR strpos(k.key, $3::text) > 0)
   AND ($4::timestamptz IS NULL
        OR (k.updated_at, k.scope, k.key) < ($4::timestamptz, $5::text, $6::text))
 ORDER BY k.updated_at DESC, k.scope DESC, k.key DESC
 LIMIT $7
