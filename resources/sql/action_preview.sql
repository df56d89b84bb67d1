-- The preview of an action on dead letters (docs/domain.md#bulk-actions-act-on-the-frozen-set,
-- docs/domain.md#requeue-checks-the-ordering-key): the targets the operator
-- is about to confirm, each with the version to confirm, where it lives and the worst of its
-- safe-to-retry verdicts. $1 explicit ids (bigint[], or NULL); $2 a failure group's fingerprint
-- (or NULL): its open dead letters. Ordered by id, so the frozen list is stable.
--
-- Two branches, of which one runs (a one-time filter): which retry_verdict() the pinned
-- search_path finds tells the native source from a source adapter.
-- - Native: one read of the targets with every input the verdict rules need (the job, the
--   idempotency key, the newest later event of the entity that succeeded, the payment's
--   unresolved mismatches), which PostgreSQL can run in parallel workers, and the rules as
--   expressions over that row. The rules and their texts are those of retry_verdict() and
--   retry_verdicts() (migration 0043); tst_failure_groups compares this preview with
--   retry_verdict() target by target over the demo world. Asking retry_verdicts() for 113,037
--   targets read each target's dead letter a second time and its job, key and events one
--   process at a time: 1.4 s, against 0.8 s for this (docs/benchmarks.md, the preview row).
--   Reasons are joined in the order retry_verdict()'s rows sort by severity, code and text
--   (block before warn, then by code; two mismatches of one payment by kind), one lease
--   instant for both lease rules.
-- - A source adapter: its own retry_verdict(), once per target.
WITH judged AS MATERIALIZED (SELECT clock_timestamp() AS at),
native AS (
    SELECT DISTINCT ON (d.id)
           d.id, d.version, d.status, d.queue, d.kind, d.error_class, d.error_code,
           d.fingerprint, d.claimed_by,
           j.state AS job_state, j.locked_until, j.locked_by, j.attempt, j.max_attempts,
           j.run_at, j.entity_id, j.event_seq,
           k.key, k.state AS key_state, k.updated_at AS key_updated_at,
           n.event_seq AS newer_seq, coalesce(m.provider, mp.provider) AS provider
      FROM redrive.dead_letter d
      JOIN redrive.job j ON j.id = d.job_id
      LEFT JOIN redrive.idempotency_key k
             ON k.scope = d.kind AND k.key = d.idempotency_key
            AND k.state IN ('done', 'processing')
      -- Every later event of the entity that succeeded; DISTINCT ON keeps the newest.
      LEFT JOIN redrive.job n
             ON n.entity_id = j.entity_id AND n.kind = j.kind AND n.event_seq > j.event_seq
            AND n.state = 'succeeded'
      -- The unresolved mismatches of the two kinds, one row per payment. For a group or more
      -- than 10,000 ids they are all read once and hashed (tens of thousands of rows, cheaper
      -- than a probe per target, and a hash join keeps the read parallel); for fewer ids,
      -- probed per target (reading them all cost a single-target preview 70 ms). The
      -- condition is on the parameters, so the branch that does not apply is planned away.
      LEFT JOIN (SELECT m.payment_ref,
                        string_agg(format('Reconciliation found a %s mismatch for %s: the '
                                          'provider may already have the charge.',
                                          m.kind, m.payment_ref), ' ' ORDER BY m.kind) AS provider
                   FROM redrive.reconciliation_mismatch m
                  WHERE m.status <> 'resolved'
                    AND m.kind IN ('missing_internal', 'duplicate_external')
                    AND ($2::text IS NOT NULL OR cardinality($1::bigint[]) > 10000)
                  GROUP BY m.payment_ref) m ON m.payment_ref = j.entity_id
      LEFT JOIN LATERAL (
                 SELECT string_agg(format('Reconciliation found a %s mismatch for %s: the '
                                          'provider may already have the charge.',
                                          m.kind, m.payment_ref), ' ' ORDER BY m.kind) AS provider
                   FROM redrive.reconciliation_mismatch m
                  WHERE m.payment_ref = j.entity_id AND m.status <> 'resolved'
                    AND m.kind IN ('missing_internal', 'duplicate_external')
                    AND NOT ($2::text IS NOT NULL OR cardinality($1::bigint[]) > 10000)) mp
             ON true
     WHERE to_regprocedure('retry_verdict(bigint)') = 'redrive.retry_verdict(bigint)'::regprocedure
       AND (d.id = ANY ($1::bigint[])
            OR ($2::text IS NOT NULL AND d.fingerprint = $2::text AND d.status = 'open'))
     ORDER BY d.id, n.event_seq DESC NULLS LAST),
-- The instant as a subquery, not a join: the rows keep their order by id, so the two branches
-- are merged without sorting the whole preview again.
native_judged AS (
    SELECT i.*,
           i.status = 'requeued' AND i.job_state = 'queued' AS already_requeued,
           i.job_state = 'running' AND i.locked_until > (SELECT t.at FROM judged t) AS job_leased,
           i.job_state = 'running'
               AND i.locked_until <= (SELECT t.at FROM judged t) AS lease_expired,
           i.error_code = 'idempotency_key_reuse' AS key_reused,
           i.error_class = 'permanent' AND i.error_code <> 'idempotency_key_reuse' AS permanent
      FROM native i),
targets AS MATERIALIZED (
    SELECT d.id, d.version, d.status, d.queue, d.kind, d.error_class, d.error_code,
           d.fingerprint, d.claimed_by
      FROM dead_letter_list d
     WHERE to_regprocedure('retry_verdict(bigint)')
           IS DISTINCT FROM 'redrive.retry_verdict(bigint)'::regprocedure
       AND (d.id = ANY ($1::bigint[])
            OR ($2::text IS NOT NULL AND d.fingerprint = $2::text AND d.status = 'open'))
),
worst AS (
    SELECT t.id,
           CASE WHEN bool_or(v.severity = 'block') THEN 'block'
                WHEN bool_or(v.severity = 'warn') THEN 'warn' END AS severity,
           string_agg(v.explanation, ' ' ORDER BY v.severity, v.code, v.explanation) AS reasons
      FROM targets t CROSS JOIN LATERAL retry_verdict(t.id) v
     GROUP BY t.id)
SELECT i.id, i.version, i.status, i.queue, i.kind, i.error_class, i.error_code, i.fingerprint,
       i.claimed_by,
       CASE WHEN i.already_requeued OR i.job_leased OR i.key_reused OR i.permanent THEN 'block'
            WHEN i.lease_expired OR i.key_state IS NOT NULL OR i.provider IS NOT NULL
                 OR i.newer_seq IS NOT NULL OR i.error_class = 'ambiguous' THEN 'warn'
            ELSE 'ok' END AS verdict,
       concat_ws(' ',
           -- block
           CASE WHEN i.already_requeued THEN
               format('Already requeued: the job is queued again for attempt %s of %s, due %s. '
                      'Its outcome closes this dead letter or opens it again; another requeue '
                      'now would be refused.', i.attempt + 1, i.max_attempts, i.run_at) END,
           CASE WHEN i.job_leased THEN
               format('The job is still leased by %s until %s: it may be running right now.',
                      i.locked_by, i.locked_until) END,
           CASE WHEN i.key_reused THEN
               'The idempotency key was used for a different request: retrying cannot '
               'succeed.' END,
           CASE WHEN i.permanent THEN
               format('The last failure was permanent (%s): retrying unchanged will fail '
                      'again.', i.error_code) END,
           -- warn
           CASE WHEN i.error_class = 'ambiguous' THEN
               'The last failure was ambiguous: the side effect may have happened. Check the '
               'receiving side before requeueing.' END,
           CASE WHEN i.key_state = 'done' THEN
               format('Idempotency key %s is already done: a retry would return the stored '
                      'result and do nothing.', i.key) END,
           CASE WHEN i.key_state = 'processing' THEN
               format('Idempotency key %s is stuck in processing since %s: the side effect '
                      'may have happened.', i.key, i.key_updated_at) END,
           CASE WHEN i.lease_expired THEN
               format('The job''s lease (held by %s) expired at %s without a result; its last '
                      'attempt may have had an effect.', i.locked_by, i.locked_until) END,
           CASE WHEN i.newer_seq IS NOT NULL THEN
               format('A newer event for %s (sequence %s) succeeded after this one (sequence '
                      '%s): replaying this one could move the entity backwards.',
                      i.entity_id, i.newer_seq, i.event_seq) END,
           i.provider) AS verdict_reasons
  FROM native_judged i
UNION ALL
SELECT t.id, t.version, t.status, t.queue, t.kind, t.error_class, t.error_code, t.fingerprint,
       t.claimed_by,
       coalesce(v.severity, 'ok') AS verdict,
       coalesce(v.reasons, '') AS verdict_reasons
  FROM targets t
  LEFT JOIN worst v ON v.id = t.id
 ORDER BY id
