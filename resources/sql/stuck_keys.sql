-- Idempotency keys stuck in processing past their lease, oldest first, with how long; $1 scopes
-- (NULL = all), $2 rows. A lease that ran out at '-infinity' has no number of seconds (NULL);
-- the key is still listed.
SELECT k.scope, k.key, k.state, k.locked_by, k.locked_until, k.job_ref, k.request_hash,
       k.updated_at, k.version,
       CASE WHEN isfinite(k.locked_until)
            THEN (extract(epoch FROM now()) - extract(epoch FROM k.locked_until))::bigint
       END AS stuck_seconds
  FROM idempotency_key_list k
 WHERE k.state = 'processing' AND k.locked_until < now()
   AND ($1::text[] IS NULL OR k.scope = ANY ($1::text[]))
 ORDER BY k.locked_until, k.scope, k.key
 LIMIT $2
