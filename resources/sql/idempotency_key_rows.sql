-- A page of the keys list by a frozen pass (docs/architecture.md#paging-a-frozen-pass): the
-- idempotency keys named by $1 scopes and $2 keys (parallel arrays, a slice of
-- idempotency_key_keys.sql's list), in that order, with what they are now. One index
-- lookup per pair (the lateral subquery, kept apart by OFFSET 0, is never a hash join).
SELECT k.scope, k.key, k.state, k.locked_by, k.locked_until, k.job_ref, k.request_hash,
       k.result_text, k.error_message, k.conflict_count, k.created_at, k.updated_at,
       k.expires_at, k.version, k.stuck
  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(scope, key, pos)
 CROSS JOIN LATERAL (SELECT x.* FROM idempotency_key_list x
                      WHERE x.scope = u.scope AND x.key = u.key OFFSET 0) k
 ORDER BY u.pos
