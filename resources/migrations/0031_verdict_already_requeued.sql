-- SPDX-License-Identifier: GPL-3.0-or-later
-- The safe-to-retry verdict knows a requeued dead letter whose job waits for its next attempt:
-- the case view of such a dead letter said "Safe to retry" (no rule looked at the status), although
-- the job is already queued again and a requeue would be refused as a conflict. Rule
-- `already_requeued` (block) says so, with the attempt it waits for and when it is due, in both
-- the per-dead-letter function and the set-based one (which must return the same rows:
-- tests/db/tst_failure_groups.cpp setBasedVerdictEqualsPerRowOverTheDemoWorld). A requeued job
-- that is running is already covered by `job_leased` / `lease_expired`. Grants are kept by
-- CREATE OR REPLACE.

CREATE OR REPLACE FUNCTION redrive.retry_verdict(p_dead_letter bigint)
RETURNS TABLE (severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (SELECT dl.*, j.entity_id, j.event_seq, j.event_at, j.state AS job_state,
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
      FROM d WHERE d.job_state = 'running' AND d.locked_until > clock_timestamp()
    UNION ALL
    SELECT 'warn', 'lease_expired',
           format('The job''s lease (held by %s) expired at %s without a result; its last '
                  'attempt may have had an effect.', d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until <= clock_timestamp()
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

CREATE OR REPLACE FUNCTION redrive.retry_verdicts(p_dead_letters bigint[])
RETURNS TABLE (dead_letter_id bigint, severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS MATERIALIZED (
        SELECT dl.id, dl.kind, dl.idempotency_key, dl.error_class, dl.error_code, dl.status,
               j.entity_id, j.event_seq, j.state AS job_state, j.locked_until, j.locked_by,
               j.kind AS job_kind, j.attempt AS job_attempt, j.max_attempts, j.run_at
          FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
         WHERE dl.id IN (SELECT unnest(p_dead_letters)))
    SELECT d.id, 'block', 'already_requeued',
           format('Already requeued: the job is queued again for attempt %s of %s, due %s. Its '
                  'outcome closes this dead letter or opens it again; another requeue now would '
                  'be refused.', d.job_attempt + 1, d.max_attempts, d.run_at)
      FROM d WHERE d.status = 'requeued' AND d.job_state = 'queued'
    UNION ALL
    SELECT d.id, 'block', 'job_leased',
           format('The job is still leased by %s until %s: it may be running right now.',
                  d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until > clock_timestamp()
    UNION ALL
    SELECT d.id, 'warn', 'lease_expired',
           format('The job''s lease (held by %s) expired at %s without a result; its last '
                  'attempt may have had an effect.', d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until <= clock_timestamp()
    UNION ALL
    SELECT d.id, 'warn', 'key_done',
           format('Idempotency key %s is already done: a retry would return the stored result '
                  'and do nothing.', k.key)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'done'
    UNION ALL
    SELECT d.id, 'warn', 'key_stuck',
           format('Idempotency key %s is stuck in processing since %s: the side effect may '
                  'have happened.', k.key, k.updated_at)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'processing'
    UNION ALL
    SELECT d.id, 'block', 'key_reused',
           'The idempotency key was used for a different request: retrying cannot succeed.'
      FROM d WHERE d.error_code = 'idempotency_key_reuse'
    UNION ALL
    SELECT d.id, 'warn', 'provider_has_charge',
           format('Reconciliation found a %s mismatch for %s: the provider may already have the '
                  'charge.', m.kind, m.payment_ref)
      FROM d JOIN redrive.reconciliation_mismatch m ON m.payment_ref = d.entity_id
     WHERE m.status <> 'resolved' AND m.kind IN ('missing_internal', 'duplicate_external')
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
