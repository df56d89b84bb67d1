-- SPDX-License-Identifier: GPL-3.0-or-later
-- retry_verdicts() with the same rules, the same rows, and its targets' inputs read for less
-- (docs/benchmarks.md, "action preview"). On the largest open group of the 1,000,000 world
-- (113,037 dead letters) it took 1.3-1.9 s, of which 0.8 s reading each target's dead letter
-- and job, and most of the rest six joins and ten scans of that set:
-- - the targets by `id = ANY (array)`: PostgreSQL sorts the array and walks the primary key in
--   order, where `IN (SELECT unnest(...))` hashed the ids and looked them up in hash order (the
--   same rows: both ignore duplicates and NULLs);
-- - the idempotency key looked up once for both key rules (done, stuck), not once per rule;
-- - for more than 10,000 targets, the unresolved mismatches of the two kinds read once and
--   hashed, not probed once per target (0.2 s for 113,037 probes; reading them all costs a few
--   tens of ms, more than a few probes: the branch that does not apply is never run, and the
--   CTE m with it).
-- - the time read once per call: each lease rule read clock_timestamp() itself, so a lease that
--   ran out between the two rules' passes got both "still leased" and "expired" (found by a
--   reviewer comparing the two functions; the per-row retry_verdict() had the same two reads,
--   microseconds apart, and gets the same fix below).
-- The rules and their texts are those of migration 31, unchanged. CREATE OR REPLACE keeps the
-- grants.

CREATE OR REPLACE FUNCTION redrive.retry_verdicts(p_dead_letters bigint[])
RETURNS TABLE (dead_letter_id bigint, severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- One instant for the whole call: read twice, a lease that ran out between the two lease
    -- rules' passes over d got both verdicts, "still leased" and "expired".
    WITH judged AS MATERIALIZED (SELECT clock_timestamp() AS at),
    d AS MATERIALIZED (
        SELECT dl.id, dl.kind, dl.idempotency_key, dl.error_class, dl.error_code, dl.status,
               j.entity_id, j.event_seq, j.state AS job_state, j.locked_until, j.locked_by,
               j.kind AS job_kind, j.attempt AS job_attempt, j.max_attempts, j.run_at
          FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
         WHERE dl.id = ANY (p_dead_letters)),
    k AS MATERIALIZED (
        SELECT d.id, k.key, k.state, k.updated_at
          FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
         WHERE k.state IN ('done', 'processing')),
    -- Read only by the rule's branch for more than 10,000 targets.
    m AS MATERIALIZED (
        SELECT m.payment_ref, m.kind
          FROM redrive.reconciliation_mismatch m
         WHERE m.status <> 'resolved' AND m.kind IN ('missing_internal', 'duplicate_external'))
    SELECT d.id, 'block', 'already_requeued',
           format('Already requeued: the job is queued again for attempt %s of %s, due %s. Its '
                  'outcome closes this dead letter or opens it again; another requeue now would '
                  'be refused.', d.job_attempt + 1, d.max_attempts, d.run_at)
      FROM d WHERE d.status = 'requeued' AND d.job_state = 'queued'
    UNION ALL
    SELECT d.id, 'block', 'job_leased',
           format('The job is still leased by %s until %s: it may be running right now.',
                  d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until > (SELECT j.at FROM judged j)
    UNION ALL
    SELECT d.id, 'warn', 'lease_expired',
           format('The job''s lease (held by %s) expired at %s without a result; its last '
                  'attempt may have had an effect.', d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until <= (SELECT j.at FROM judged j)
    UNION ALL
    SELECT k.id, 'warn', 'key_done',
           format('Idempotency key %s is already done: a retry would return the stored result '
                  'and do nothing.', k.key)
      FROM k WHERE k.state = 'done'
    UNION ALL
    SELECT k.id, 'warn', 'key_stuck',
           format('Idempotency key %s is stuck in processing since %s: the side effect may '
                  'have happened.', k.key, k.updated_at)
      FROM k WHERE k.state = 'processing'
    UNION ALL
    SELECT d.id, 'block', 'key_reused',
           'The idempotency key was used for a different request: retrying cannot succeed.'
      FROM d WHERE d.error_code = 'idempotency_key_reuse'
    UNION ALL
    SELECT d.id, 'warn', 'provider_has_charge',
           format('Reconciliation found a %s mismatch for %s: the provider may already have the '
                  'charge.', m.kind, m.payment_ref)
      FROM d JOIN redrive.reconciliation_mismatch m ON m.payment_ref = d.entity_id
     WHERE cardinality(p_dead_letters) <= 10000
       AND m.status <> 'resolved' AND m.kind IN ('missing_internal', 'duplicate_external')
    UNION ALL
    SELECT d.id, 'warn', 'provider_has_charge',
           format('Reconciliation found a %s mismatch for %s: the provider may already have the '
                  'charge.', m.kind, m.payment_ref)
      FROM d JOIN m ON m.payment_ref = d.entity_id
     WHERE cardinality(p_dead_letters) > 10000
    UNION ALL
    SELECT d.id, 'warn', 'newer_event_processed',
           format('A newer event for %s (sequence %s) succeeded after this one (sequence %s): '
                  'replaying this one could move the entity backwards.',
                  d.entity_id, max(n.event_seq), d.event_seq)
      FROM d JOIN redrive.job n ON n.entity_id = d.entity_id AND n.kind = d.job_kind
                              AND n.event_seq > d.event_seq AND n.state = 'succeeded'
     GROUP BY d.id, d.entity_id, d.event_seq
    UNION ALL
    SELECT d.id, 'warn', 'ambiguous',
           'The last failure was ambiguous: the side effect may have happened. Check the '
           'receiving side before requeueing.'
      FROM d WHERE d.error_class = 'ambiguous'
    UNION ALL
    SELECT d.id, 'block', 'permanent',
           format('The last failure was permanent (%s): retrying unchanged will fail again.',
                  d.error_code)
      FROM d WHERE d.error_class = 'permanent' AND d.error_code <> 'idempotency_key_reuse'
$$;

-- The per-row verdict of migration 31 with the same one instant for both lease rules.
CREATE OR REPLACE FUNCTION redrive.retry_verdict(p_dead_letter bigint)
RETURNS TABLE (severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH judged AS MATERIALIZED (SELECT clock_timestamp() AS at),
    d AS (SELECT dl.*, j.entity_id, j.event_seq, j.event_at, j.state AS job_state,
                      j.locked_until, j.locked_by, j.kind AS job_kind,
                      j.attempt AS job_attempt, j.max_attempts, j.run_at
                 FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
                WHERE dl.id = p_dead_letter)
    SELECT 'block', 'already_requeued',
           format('Already requeued: the job is queued again for attempt %s of %s, due %s. Its '
                  'outcome closes this dead letter or opens it again; another requeue now would '
                  'be refused.', d.job_attempt + 1, d.max_attempts, d.run_at)
      FROM d WHERE d.status = 'requeued' AND d.job_state = 'queued'
    UNION ALL
    SELECT 'block', 'job_leased',
           format('The job is still leased by %s until %s: it may be running right now.',
                  d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until > (SELECT j.at FROM judged j)
    UNION ALL
    SELECT 'warn', 'lease_expired',
           format('The job''s lease (held by %s) expired at %s without a result; its last '
                  'attempt may have had an effect.', d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until <= (SELECT j.at FROM judged j)
    UNION ALL
    SELECT 'warn', 'key_done',
           format('Idempotency key %s is already done: a retry would return the stored result '
                  'and do nothing.', k.key)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'done'
    UNION ALL
    SELECT 'warn', 'key_stuck',
           format('Idempotency key %s is stuck in processing since %s: the side effect may '
                  'have happened.', k.key, k.updated_at)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'processing'
    UNION ALL
    SELECT 'block', 'key_reused',
           'The idempotency key was used for a different request: retrying cannot succeed.'
      FROM d WHERE d.error_code = 'idempotency_key_reuse'
    UNION ALL
    SELECT 'warn', 'provider_has_charge',
           format('Reconciliation found a %s mismatch for %s: the provider may already have the '
                  'charge.', m.kind, m.payment_ref)
      FROM d JOIN redrive.reconciliation_mismatch m ON m.payment_ref = d.entity_id
     WHERE m.status <> 'resolved' AND m.kind IN ('missing_internal', 'duplicate_external')
    UNION ALL
    SELECT 'warn', 'newer_event_processed',
           format('A newer event for %s (sequence %s) succeeded after this one (sequence %s): '
                  'replaying this one could move the entity backwards.',
                  d.entity_id, max(n.event_seq), d.event_seq)
      FROM d JOIN redrive.job n ON n.entity_id = d.entity_id AND n.kind = d.job_kind
                              AND n.event_seq > d.event_seq AND n.state = 'succeeded'
     GROUP BY d.entity_id, d.event_seq
    UNION ALL
    SELECT 'warn', 'ambiguous',
           'The last failure was ambiguous: the side effect may have happened. Check the '
           'receiving side before requeueing.'
      FROM d WHERE d.error_class = 'ambiguous'
    UNION ALL
    SELECT 'block', 'permanent',
           format('The last failure was permanent (%s): retrying unchanged will fail again.',
                  d.error_code)
      FROM d WHERE d.error_class = 'permanent' AND d.error_code <> 'idempotency_key_reuse'
$$;
