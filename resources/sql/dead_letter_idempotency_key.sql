-- The idempotency-key record of a dead letter's job (scope = the job kind).
SELECT k.scope, k.key, k.request_hash, k.state, k.locked_by, k.locked_until, k.result_text,
       k.error_message, k.conflicting_hash, k.conflict_count, k.last_conflict_at, k.created_at,
       k.updated_at, k.expires_at, k.version, k.stuck
  FROM idempotency_key_list k
  JOIN dead_letter_list d ON k.scope = d.kind AND k.key = d.idempotency_key
 WHERE d.id = $1
