-- A page of the keys list by a frozen pass (docs/architecture.md#paging-a-frozen-pass): the
-- idempotency keys named by $1 scopes and $2 keys (parallel arrays, a slice of
-- idempotency_key_keys.sql's list), in that order, with what they are now. One primary-key
-- lookup per pair.
SELECT k.scope, k.key, k.state, k.locked_by, k.locked_until, k.job_ref, k.request_hash,
       k.result_text, k.error_message, k.conflict_count, k.created_at, k.updated_at,
       k.expires_at, k.version, k.stuck
  FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(scope, key, pos)
  JOIN idempotency_key_list k ON k.scope = u.scope AND k.key = u.key
 ORDER BY u.pos
