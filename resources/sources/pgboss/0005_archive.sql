-- SPDX-License-Identifier: GPL-3.0-or-later
-- The pg-boss 10 adapter, version 5: nothing disappears into pg-boss's archive.
-- pg-boss 10 moves failed jobs to pgboss.archive archiveFailedAfterSeconds after they failed
-- (12 hours by default; src/plans.js archive(): DELETE from job, INSERT into archive with
-- archived_on), and its own retry() reaches only pgboss.job. Version 1 listed pgboss.job only, so
-- archived failures vanished ("0 dead letters"). Now:
-- * an archived failure stays listed (job_state 'archived' in the case view, archived_on in its
--   headers, a warning in the retry verdict);
-- * requeue moves it back into pgboss.job (the row as archived, minus archived_on, in state
--   created with one more attempt, or the whole budget again with reset_attempts: what
--   retry() would have done had the row still been there), so pg-boss's worker runs it again.
-- pgboss.archive is read only inside functions (plpgsql, not tracked as a dependency), so a
-- later pg-boss that drops the archive table (11 and on) is not blocked by this adapter, and the
-- functions then return nothing. A job whose handler outlived expireInSeconds ("handler
-- execution exceeded 1000ms", the worker's own timer) has reason deadline too, like one failed
-- by maintenance.

-- The archived failure with this id in this queue, as a pgboss.job row, with when it was
-- archived. SECURITY DEFINER: the views call it as their reader, so it is granted to the roles
-- that read them (it returns nothing the views would not show).
CREATE FUNCTION redrive_pgboss.archived_failure(p_id uuid, p_name text)
RETURNS TABLE (job pgboss.job, archived_on timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF to_regclass('pgboss.archive') IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE
        'SELECT jsonb_populate_record(NULL::pgboss.job, to_jsonb(a)), a.archived_on
           FROM pgboss.archive a WHERE a.id = $1 AND a.name = $2 AND a.state = ''failed'''
        USING p_id, p_name;
END
$$;
REVOKE ALL ON FUNCTION redrive_pgboss.archived_failure(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.archived_failure(uuid, text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

CREATE OR REPLACE VIEW redrive_pgboss.job_state AS
SELECT s.id, (u.j).id::text AS job_ref, (u.j).name AS queue, (u.j).name AS kind,
       CASE WHEN (u.j).state = 'failed' AND s.resolved_at IS NOT NULL THEN 'resolved'
            WHEN (u.j).state = 'failed' THEN 'open'
            WHEN (u.j).state = 'completed' THEN 'resolved'
            ELSE 'requeued' END AS status,
       CASE WHEN redrive_pgboss.error_message((u.j).output) = 'job failed by timeout in active state'
                 OR redrive_pgboss.error_message((u.j).output)
                    ~ '^handler execution exceeded [0-9]+m?s$'
            THEN 'deadline'
            WHEN (u.j).retry_count >= (u.j).retry_limit THEN 'exhausted'
            ELSE 'permanent' END AS reason,
       redrive_pgboss.error_class((u.j).output) AS error_class,
       redrive_pgboss.error_code((u.j).output) AS error_code,
       redrive_pgboss.error_message((u.j).output) AS last_error,
       (u.j).output ->> 'stack' AS stack_trace,
       (u.j).retry_count + CASE WHEN (u.j).started_on IS NULL THEN 0 ELSE 1 END AS attempts,
       (u.j).singleton_key AS idempotency_key,
       coalesce((u.j).completed_on, s.last_failed_at, (u.j).created_on) AS dead_at,
       s.version, s.claimed_by, s.claimed_at,
       CASE WHEN (u.j).state = 'completed' THEN 'succeeded_after_requeue'
            ELSE s.resolution END AS resolution,
       s.resolution_note, s.resolved_by,
       CASE WHEN (u.j).state = 'completed' THEN (u.j).completed_on ELSE s.resolved_at END AS resolved_at,
       s.updated_at, CASE WHEN u.archived_on IS NOT NULL THEN 'archived' ELSE (u.j).state::text END
           AS job_state,
       u.j, u.archived_on
  FROM redrive.source_job s
  JOIN LATERAL (SELECT j, NULL::timestamptz AS archived_on FROM pgboss.job j
                 WHERE j.id = s.job_ref::uuid AND j.name = s.queue
                UNION ALL
                SELECT a.job, a.archived_on
                  FROM redrive_pgboss.archived_failure(s.job_ref::uuid, s.queue) a
                 LIMIT 1) u ON true
 WHERE s.source = 'pgboss';

CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, d.updated_at, 'pgboss'::text AS source
  FROM redrive_pgboss.job_state d
 WHERE d.job_state IN ('failed', 'archived');

-- The case view also finds a dead letter that was requeued (status requeued) or has since
-- succeeded (resolved, succeeded_after_requeue), for as long as pg-boss keeps the job.
CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_detail AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.stack_trace, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at,
       (d.j).data::text AS payload_text, NULL::bytea AS payload_bytes,
       octet_length(coalesce((d.j).data::text, '')) AS payload_size,
       jsonb_build_object('queue_policy', (d.j).policy, 'priority', (d.j).priority,
                          'retry_limit', (d.j).retry_limit, 'retry_delay', (d.j).retry_delay,
                          'retry_backoff', (d.j).retry_backoff,
                          'expire_in', (d.j).expire_in::text, 'keep_until', (d.j).keep_until,
                          'singleton_key', (d.j).singleton_key,
                          'dead_letter_queue', (d.j).dead_letter, 'output', (d.j).output,
                          'archived_on', d.archived_on)
           AS headers,
       NULL::text AS entity_id, NULL::bigint AS event_seq, NULL::timestamptz AS event_at,
       d.job_state, d.attempts AS job_attempt, (d.j).retry_limit + 1 AS max_attempts,
       NULL::text AS locked_by,
       CASE WHEN d.job_state = 'active' THEN (d.j).started_on + (d.j).expire_in END
           AS locked_until,
       (d.j).start_after AS run_at, (d.j).created_on AS job_created_at,
       NULL::timestamptz AS deadline_at, 'pgboss'::text AS source
  FROM redrive_pgboss.job_state d;

CREATE OR REPLACE FUNCTION redrive_pgboss.retry_verdict(p_dead_letter bigint)
RETURNS TABLE (severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- Reads only what the caller may read (this function runs as the caller).
    WITH d AS (SELECT * FROM redrive_pgboss.dead_letter_detail WHERE id = p_dead_letter)
    SELECT 'block', 'job_not_failed',
           format('pg-boss no longer holds this job as failed (state %s): it was retried or '
                  'completed since.', d.job_state)
      FROM d WHERE d.job_state NOT IN ('failed', 'archived')
    UNION ALL
    SELECT 'warn', 'archived',
           format('pg-boss moved this failed job to pgboss.archive at %s, where its own retry() '
                  'no longer reaches it. Requeue here moves it back into pgboss.job first (as '
                  'pg-boss would need), then retries it.',
                  to_char((d.headers ->> 'archived_on')::timestamptz AT TIME ZONE 'UTC',
                          'YYYY-MM-DD HH24:MI "UTC"'))
      FROM d WHERE d.job_state = 'archived'
    UNION ALL
    SELECT 'warn', 'dead_letter_queue_copy',
           format('pg-boss already sent a copy of this job to its dead-letter queue %s: a '
                  'retry here may run the work twice.', d.headers ->> 'dead_letter_queue')
      FROM d WHERE d.headers ->> 'dead_letter_queue' IS DISTINCT FROM d.queue
               AND d.headers ->> 'dead_letter_queue' IS NOT NULL
    UNION ALL
    SELECT 'warn', 'ambiguous',
           'The last failure was ambiguous (a timeout): the side effect may have happened. '
           'Check the receiving side before requeueing.'
      FROM d WHERE d.error_class = 'ambiguous'
    UNION ALL
    SELECT 'block', 'permanent',
           format('The last failure was permanent (%s): retrying unchanged will fail again.',
                  coalesce(d.error_code, d.last_error))
      FROM d WHERE d.error_class = 'permanent'
$$;


-- Requeue and edit_and_requeue: archived targets are moved back first, then retried as in
-- version 3 (change_jobs below keeps version 3's UPDATE for rows in pgboss.job).
CREATE OR REPLACE FUNCTION redrive_pgboss.change_jobs(p_rows redrive.source_target[],
                                                      p_action text, p_params jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_reset boolean := (p_params ->> 'reset_attempts')::boolean;
BEGIN
    IF p_action NOT IN ('requeue', 'edit_and_requeue') THEN
        RAISE EXCEPTION 'pg-boss jobs change only on a requeue, not on %', p_action
              USING ERRCODE = 'feature_not_supported';
    END IF;
    IF to_regclass('pgboss.archive') IS NOT NULL THEN
        -- Back from the archive, in state created (the capture trigger records failures only),
        -- with the retry budget as retry() would leave it.
        EXECUTE $sql$
            WITH moved AS (
                DELETE FROM pgboss.archive a
                 USING redrive.source_job s
                 WHERE s.id IN (SELECT r.id FROM unnest($1) r) AND s.source = 'pgboss'
                   AND a.id = s.job_ref::uuid AND a.name = s.queue AND a.state = 'failed'
                RETURNING a.*)
            INSERT INTO pgboss.job (id, name, priority, data, state, retry_limit, retry_count,
                                    retry_delay, retry_backoff, start_after, started_on,
                                    singleton_key, singleton_on, expire_in, created_on,
                                    completed_on, keep_until, dead_letter, policy, output)
            SELECT m.id, m.name, m.priority,
                   CASE WHEN $2 = 'edit_and_requeue' THEN $3 -> 'payload' ELSE m.data END,
                   'created', CASE WHEN $4 THEN m.retry_limit ELSE m.retry_limit + 1 END,
                   CASE WHEN $4 THEN 0 ELSE m.retry_count END, m.retry_delay, m.retry_backoff,
                   now(), CASE WHEN $4 THEN NULL ELSE m.started_on END, m.singleton_key,
                   m.singleton_on, m.expire_in, m.created_on, NULL,
                   greatest(m.keep_until, now() + interval '14 days'), m.dead_letter, m.policy,
                   m.output
              FROM moved m
        $sql$ USING p_rows, p_action, p_params, v_reset;
    END IF;
    UPDATE pgboss.job j
       SET data = CASE WHEN p_action = 'edit_and_requeue' THEN p_params -> 'payload'
                       ELSE j.data END,
           state = 'retry',
           retry_limit = CASE WHEN v_reset THEN j.retry_limit ELSE j.retry_limit + 1 END,
           retry_count = CASE WHEN v_reset THEN 0 ELSE j.retry_count END,
           started_on = CASE WHEN v_reset THEN NULL ELSE j.started_on END
      FROM redrive.source_job s
     WHERE s.id IN (SELECT r.id FROM unnest(p_rows) r) AND s.source = 'pgboss'
       AND j.name = s.queue AND j.id = s.job_ref::uuid AND j.state = 'failed';
END
$$;

UPDATE redrive.source SET adapter_version = 5 WHERE name = 'pgboss';
