-- Idempotency keys that saw a request with a different hash (never replayed), newest first.
SELECT k.scope, k.key, k.state, k.request_hash, k.conflicting_hash, k.conflict_count,
       k.last_conflict_at, k.job_ref
  FROM idempotency_key_list k
 WHERE k.conflicting_hash IS NOT NULL
   AND ($1::text[] IS NULL OR k.scope = ANY ($1::text[]))
 ORDER BY k.last_conflict_at DESC, k.scope, k.key
 LIMIT $2
