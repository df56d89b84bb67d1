-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" for pg-boss 12 (schema version 46), version 1. pg-boss 10's adapter
-- (resources/sources/pgboss/) cannot be installed on 12: its views name columns 12 dropped. This
-- line starts from pg-boss 10's adapter at version 3 (the shared action skeleton, migration 8)
-- and changes what pg-boss 12 changed, read from its dist/plans.js:
-- * No pgboss.archive (gone since 11): failed jobs stay in pgboss.job until pg-boss deletes them,
--   deletion_seconds after completed_on whatever their state (plans.js deletion()). Redrive's
--   record (redrive.source_job and its captured attempts) stays after that: every view here
--   LEFT JOINs pg-boss's row, so the case view still opens, and says when the row was (or will
--   be) deleted.
-- * Jobs of most queues share the partition pgboss.job_common (queue.table_name says which);
--   failJobs() inserts straight into the partition. Row triggers made on the parent pgboss.job
--   are cloned onto every partition, existing and attached later, so capture is unchanged.
-- * expire_in became expire_seconds; deletion_seconds, heartbeat_* and flow columns are new.
-- * retry() (retryJobs) also clears completed_on and moves start_after to now if it lies in the
--   past: a requeue that left completed_on set would have the deletion sweep remove the job
--   while it waits.
-- * A failed job with a dead-letter queue gets a copy there (a new job, source_id = the failed
--   job, source_output = its error). redrive() moves the copy back as a new job in the source
--   queue (source_root_id = the chain's first job, source_id NULL). The failed job it came from
--   stays failed in pg-boss, but its work is running again: Redrive records that
--   (source_job.library_requeued_as) and shows the dead letter as requeued, never open.
-- * New timeout texts: "job timed out" (maintenance), "job heartbeat timeout", and "handler
--   execution exceeded Ns" (the worker's own timer); classed by redrive.classify_source_error.
REVOKE ALL ON SCHEMA redrive_pgboss FROM PUBLIC;
GRANT USAGE ON SCHEMA redrive_pgboss
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
REVOKE ALL ON redrive_pgboss.schema_version FROM PUBLIC;

INSERT INTO redrive.source (name, schema_name, label, queue_schema, history_starts_at,
                            adapter_version)
VALUES ('pgboss', 'redrive_pgboss', 'pg-boss', 'pgboss', clock_timestamp(), 1)
ON CONFLICT (name) DO UPDATE SET adapter_version = EXCLUDED.adapter_version;

-- ---------------------------------------------------------------------------------------------
-- What a pg-boss output (the serialized Error, or {"value": ...} for a non-object) says.
CREATE FUNCTION redrive_pgboss.error_message(o jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN coalesce(o ->> 'message', o -> 'value' ->> 'message', o ->> 'value', o::text);

CREATE FUNCTION redrive_pgboss.error_code(o jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN coalesce(o ->> 'code', o -> 'value' ->> 'code', nullif(o ->> 'name', 'Error'));

-- The structured fields of a serialized error, before its text, through the rule table of
-- migration 17 with pg-boss's own rules first: an explicit
-- errorClass, then retryable (false: permanent, true: transient, unless it is a timeout), then
-- code, HTTP status, SMTP responseCode, name.
CREATE FUNCTION redrive_pgboss.classify_error(e jsonb, p_message text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT w.error_class FROM redrive.classify_source_error_why(
    'pgboss', p_message,
    coalesce(e ->> 'code', e ->> 'status', e ->> 'statusCode',
             'SMTP' || (e ->> 'responseCode'), nullif(e ->> 'name', 'Error')),
    coalesce(e ->> 'errorClass',
             CASE WHEN jsonb_typeof(e -> 'retryable') = 'boolean' AND NOT (e -> 'retryable')::boolean
                  THEN 'permanent' END)) w);
REVOKE ALL ON FUNCTION redrive_pgboss.classify_error(jsonb, text) FROM PUBLIC;

CREATE FUNCTION redrive_pgboss.error_class(o jsonb) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN redrive_pgboss.classify_error(coalesce(o -> 'value', o), redrive_pgboss.error_message(o));

-- ---------------------------------------------------------------------------------------------
-- Capture: every failure pg-boss records becomes an attempt in redrive.source_attempt; a later
-- success of a job that failed before becomes one too. SECURITY DEFINER, so the application's
-- role needs no rights on Redrive's tables.
CREATE FUNCTION redrive_pgboss.capture_failure() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
    v_message text := redrive_pgboss.error_message(NEW.output);
BEGIN
    INSERT INTO redrive.source_job AS s (source, job_ref, queue, kind, failures, first_failed_at,
                                         last_failed_at)
    VALUES ('pgboss', NEW.id::text, NEW.name, NEW.name, 1, v_now, v_now)
    ON CONFLICT (source, job_ref) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now
    RETURNING s.id INTO v_id;
    INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                        outcome, error_class, error_code, message, stack_trace,
                                        worker_id, backoff_ms)
    VALUES (v_id, NEW.retry_count + CASE WHEN NEW.started_on IS NULL THEN 0 ELSE 1 END,
            least(coalesce(NEW.started_on, v_now), v_now), v_now, 'failed',
            redrive_pgboss.error_class(NEW.output), redrive_pgboss.error_code(NEW.output),
            v_message, NEW.output ->> 'stack', NULL,
            CASE WHEN NEW.state = 'retry'
                 THEN greatest(0, (extract(epoch FROM (NEW.start_after - now())) * 1000)::bigint)
            END);
    RETURN NULL;
END
$$;

CREATE FUNCTION redrive_pgboss.capture_success() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
BEGIN
    UPDATE redrive.source_job SET succeeded_at = v_now, version = version + 1, updated_at = v_now
     WHERE source = 'pgboss' AND job_ref = NEW.id::text
    RETURNING id INTO v_id;
    IF FOUND THEN
        INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                            outcome)
        VALUES (v_id, NEW.retry_count + 1, least(coalesce(NEW.started_on, v_now), v_now), v_now,
                'succeeded');
    END IF;
    RETURN NULL;
END
$$;
-- EXECUTE stays granted to PUBLIC: pg-boss's create_queue() attaches a new partition as the
-- application's role, and ATTACH PARTITION clones these row triggers, which needs EXECUTE on
-- their functions. Nobody can call a trigger function other than as a trigger.
GRANT EXECUTE ON FUNCTION redrive_pgboss.capture_failure(), redrive_pgboss.capture_success()
    TO PUBLIC;

CREATE TRIGGER redrive_capture_failure
    AFTER INSERT ON pgboss.job
    FOR EACH ROW WHEN (NEW.state IN ('retry', 'failed'))
    EXECUTE FUNCTION redrive_pgboss.capture_failure();
-- Only jobs fetched more than once can have failed before (fetch raises retry_count on a rerun).
CREATE TRIGGER redrive_capture_success
    AFTER UPDATE ON pgboss.job
    FOR EACH ROW WHEN (OLD.state = 'active' AND NEW.state = 'completed' AND NEW.retry_count > 0)
    EXECUTE FUNCTION redrive_pgboss.capture_success();

-- pg-boss's redrive() inserts a new job (source_id NULL, source_root_id = the chain's first
-- job) for a dead-letter copy it moves back. The failed job that copy came from is the chain's
-- most recently failed job in its source queue that no redrive has picked up yet: Redrive
-- records the new job's id on it, and shows it as requeued from then on.
CREATE FUNCTION redrive_pgboss.capture_library_redrive() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
BEGIN
    UPDATE redrive.source_job s
       SET library_requeued_as = NEW.id::text, library_requeued_at = v_now,
           version = s.version + 1, updated_at = v_now
     WHERE s.id = (SELECT s2.id FROM redrive.source_job s2
                    WHERE s2.source = 'pgboss' AND s2.queue = NEW.name
                      AND s2.library_requeued_as IS NULL
                      AND s2.job_ref IN (SELECT j.id::text FROM pgboss.job j
                                          WHERE j.name = NEW.name AND j.state = 'failed'
                                            AND (j.id = NEW.source_root_id
                                                 OR j.source_root_id = NEW.source_root_id)
                                            AND j.id <> NEW.id)
                    ORDER BY s2.last_failed_at DESC NULLS LAST, s2.id DESC LIMIT 1);
    RETURN NULL;
END
$$;
GRANT EXECUTE ON FUNCTION redrive_pgboss.capture_library_redrive() TO PUBLIC;
CREATE TRIGGER redrive_capture_library_redrive
    AFTER INSERT ON pgboss.job
    FOR EACH ROW WHEN (NEW.source_root_id IS NOT NULL AND NEW.source_id IS NULL
                       AND NEW.state = 'created')
    EXECUTE FUNCTION redrive_pgboss.capture_library_redrive();

-- History starts now: jobs that already failed for good keep the one error pg-boss kept.
INSERT INTO redrive.source_job (source, job_ref, queue, kind, failures, first_failed_at,
                                last_failed_at)
SELECT 'pgboss', j.id::text, j.name, j.name, 0, j.completed_on, j.completed_on
  FROM pgboss.job j WHERE j.state = 'failed'
ON CONFLICT (source, job_ref) DO NOTHING;
INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at, outcome,
                                    error_class, error_code, message, stack_trace, captured_by)
SELECT s.id, j.retry_count + CASE WHEN j.started_on IS NULL THEN 0 ELSE 1 END,
       least(coalesce(j.started_on, j.completed_on, j.created_on),
             coalesce(j.completed_on, j.created_on)),
       coalesce(j.completed_on, j.created_on), 'failed', redrive_pgboss.error_class(j.output),
       redrive_pgboss.error_code(j.output), redrive_pgboss.error_message(j.output),
       j.output ->> 'stack', 'install'
  FROM pgboss.job j
  JOIN redrive.source_job s ON s.source = 'pgboss' AND s.job_ref = j.id::text
 WHERE j.state = 'failed'
   AND NOT EXISTS (SELECT 1 FROM redrive.source_attempt a WHERE a.source_job_id = s.id);

-- Failed jobs pg-boss's redrive() already ran again before the install: the new job names the
-- chain's first job as source_root_id.
UPDATE redrive.source_job s
   SET library_requeued_as = r.id::text, library_requeued_at = r.created_on
  FROM pgboss.job r
 WHERE s.source = 'pgboss' AND s.library_requeued_as IS NULL
   AND r.name = s.queue AND r.source_root_id = s.job_ref::uuid AND r.source_id IS NULL;

-- ---------------------------------------------------------------------------------------------
-- The read contract (migration 4), over pg-boss's table. A dead letter is a job in state
-- 'failed'; "resolved" is Redrive's own state, kept in redrive.source_job.
-- What pg-boss 12 says of each job Redrive has a record of. A job pg-boss has deleted (its
-- deletion_seconds after completed_on passed) keeps Redrive's record: job_state 'deleted', the
-- last captured failure in place of pg-boss's output, status resolved unless it succeeded.
-- A failed job whose dead-letter copy pg-boss's redrive() moved back is requeued, not open.
CREATE VIEW redrive_pgboss.job_state AS
SELECT s.id, s.job_ref, s.queue, s.kind,
       CASE WHEN j.id IS NULL THEN 'resolved'
            WHEN j.state = 'failed' AND s.resolved_at IS NOT NULL THEN 'resolved'
            WHEN j.state = 'failed' AND s.library_requeued_as IS NOT NULL THEN 'requeued'
            WHEN j.state = 'failed' THEN 'open'
            WHEN j.state = 'completed' THEN 'resolved'
            ELSE 'requeued' END AS status,
       CASE WHEN coalesce(redrive_pgboss.error_message(j.output), la.message)
                 IN ('job timed out', 'job heartbeat timeout',
                     'job failed by timeout in active state')
                 OR coalesce(redrive_pgboss.error_message(j.output), la.message)
                    ~ '^handler execution exceeded [0-9]+s$'
            THEN 'deadline'
            WHEN j.id IS NULL OR j.retry_count >= j.retry_limit THEN 'exhausted'
            ELSE 'permanent' END AS reason,
       CASE WHEN j.id IS NULL THEN la.error_class ELSE redrive_pgboss.error_class(j.output) END
           AS error_class,
       CASE WHEN j.id IS NULL THEN la.error_code ELSE redrive_pgboss.error_code(j.output) END
           AS error_code,
       CASE WHEN j.id IS NULL THEN la.message ELSE redrive_pgboss.error_message(j.output) END
           AS last_error,
       CASE WHEN j.id IS NULL THEN la.stack_trace ELSE j.output ->> 'stack' END AS stack_trace,
       CASE WHEN j.id IS NULL THEN coalesce(la.attempt_no, 0)
            ELSE j.retry_count + CASE WHEN j.started_on IS NULL THEN 0 ELSE 1 END END
           AS attempts,
       j.singleton_key AS idempotency_key,
       coalesce(j.completed_on, s.last_failed_at, j.created_on) AS dead_at,
       s.version, s.claimed_by, s.claimed_at,
       CASE WHEN j.state = 'completed' OR (j.id IS NULL AND s.succeeded_at IS NOT NULL)
            THEN 'succeeded_after_requeue'
            ELSE s.resolution END AS resolution,
       s.resolution_note, s.resolved_by,
       CASE WHEN j.state = 'completed' THEN j.completed_on
            WHEN j.id IS NULL THEN coalesce(s.resolved_at, s.succeeded_at)
            ELSE s.resolved_at END AS resolved_at,
       s.updated_at, coalesce(j.state::text, 'deleted') AS job_state,
       j.completed_on + j.deletion_seconds * interval '1 second' AS deleted_at,
       s.library_requeued_as, j
  FROM redrive.source_job s
  LEFT JOIN pgboss.job j ON j.id = s.job_ref::uuid AND j.name = s.queue
  LEFT JOIN LATERAL (SELECT a.message, a.error_class, a.error_code, a.stack_trace, a.attempt_no
                       FROM redrive.source_attempt a
                      WHERE a.source_job_id = s.id AND j.id IS NULL
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true
 WHERE s.source = 'pgboss';

CREATE VIEW redrive_pgboss.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, d.updated_at, 'pgboss'::text AS source
  FROM redrive_pgboss.job_state d
 WHERE d.job_state = 'failed';

-- The case view also finds a dead letter that was requeued (status requeued) or has since
-- succeeded (resolved, succeeded_after_requeue), for as long as pg-boss keeps the job.
CREATE VIEW redrive_pgboss.dead_letter_detail AS
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
                          'expire_seconds', (d.j).expire_seconds,
                          'deletion_seconds', (d.j).deletion_seconds,
                          'deleted_by_pgboss_at', d.deleted_at,
                          'library_requeued_as', d.library_requeued_as,
                          'keep_until', (d.j).keep_until,
                          'singleton_key', (d.j).singleton_key,
                          'dead_letter_queue', (d.j).dead_letter, 'output', (d.j).output)
           AS headers,
       NULL::text AS entity_id, NULL::bigint AS event_seq, NULL::timestamptz AS event_at,
       d.job_state, d.attempts AS job_attempt, (d.j).retry_limit + 1 AS max_attempts,
       NULL::text AS locked_by,
       CASE WHEN d.job_state = 'active'
            THEN (d.j).started_on + (d.j).expire_seconds * interval '1 second' END
           AS locked_until,
       (d.j).start_after AS run_at, (d.j).created_on AS job_created_at,
       NULL::timestamptz AS deadline_at, 'pgboss'::text AS source
  FROM redrive_pgboss.job_state d;

CREATE VIEW redrive_pgboss.attempt_history AS
SELECT a.source_job_id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       (extract(epoch FROM (a.finished_at - a.started_at)) * 1000)::bigint AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'pgboss';

CREATE VIEW redrive_pgboss.failure_group_list AS
SELECT d.fingerprint, min(d.kind) AS kind, min(d.error_class) AS error_class,
       min(d.error_code) AS error_code, min(d.last_error) AS sample_message,
       min(d.dead_at) AS first_seen
  FROM redrive_pgboss.dead_letter_list d
 GROUP BY d.fingerprint;

-- pg-boss keeps no idempotency-key records and Redrive's requeue of its jobs needs no outbox
-- command (the action calls pg-boss's own retry in the same transaction): both lists are empty
-- here, rather than showing the native source's rows.
CREATE VIEW redrive_pgboss.idempotency_key_list AS
SELECT NULL::text AS scope, NULL::text AS key, NULL::text AS request_hash, NULL::text AS state,
       NULL::text AS job_ref, NULL::text AS locked_by, NULL::timestamptz AS locked_until,
       NULL::text AS result_text, NULL::text AS error_message, NULL::text AS conflicting_hash,
       NULL::integer AS conflict_count, NULL::timestamptz AS last_conflict_at,
       NULL::timestamptz AS created_at, NULL::timestamptz AS updated_at,
       NULL::timestamptz AS expires_at, NULL::integer AS version, NULL::boolean AS stuck
 WHERE false;

CREATE VIEW redrive_pgboss.outbox_list AS
SELECT NULL::bigint AS id, NULL::text AS command, NULL::text AS target_type,
       NULL::text AS target_id, NULL::text AS payload_text, NULL::text AS status,
       NULL::integer AS attempts, NULL::timestamptz AS available_at,
       NULL::timestamptz AS created_at, NULL::timestamptz AS processed_at,
       NULL::text AS last_error, NULL::uuid AS action_id
 WHERE false;

CREATE VIEW redrive_pgboss.attempt_timeline AS
SELECT a.started_at, a.outcome, a.error_class
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'pgboss';

CREATE FUNCTION redrive_pgboss.retry_verdict(p_dead_letter bigint)
RETURNS TABLE (severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- Reads only what the caller may read (this function runs as the caller).
    WITH d AS (SELECT * FROM redrive_pgboss.dead_letter_detail WHERE id = p_dead_letter)
    SELECT 'block', 'job_not_failed',
           format('pg-boss no longer holds this job as failed (state %s): it was retried or '
                  'completed since.', d.job_state)
      FROM d WHERE d.job_state NOT IN ('failed', 'deleted')
    UNION ALL
    SELECT 'block', 'job_deleted',
           'pg-boss has deleted this job (deletion_seconds after it failed): Redrive keeps its '
           'history and audit, but there is nothing left in pg-boss to requeue.'
      FROM d WHERE d.job_state = 'deleted'
    UNION ALL
    SELECT 'block', 'requeued_by_pgboss',
           format('pg-boss''s own redrive() already moved this job''s dead-letter copy back as '
                  'job %s: a requeue here would run the work twice.',
                  d.headers ->> 'library_requeued_as')
      FROM d WHERE d.job_state = 'failed' AND d.headers ->> 'library_requeued_as' IS NOT NULL
    UNION ALL
    SELECT 'warn', 'deletion_near',
           format('pg-boss deletes this job at %s (deletion_seconds after it failed); Redrive''s '
                  'record stays, the job and its payload do not.',
                  to_char((d.headers ->> 'deleted_by_pgboss_at')::timestamptz AT TIME ZONE 'UTC',
                          'YYYY-MM-DD HH24:MI "UTC"'))
      FROM d WHERE d.job_state = 'failed'
               AND (d.headers ->> 'deleted_by_pgboss_at')::timestamptz
                   < now() + interval '24 hours'
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

GRANT SELECT ON redrive_pgboss.dead_letter_list, redrive_pgboss.dead_letter_detail,
                redrive_pgboss.attempt_history, redrive_pgboss.failure_group_list,
                redrive_pgboss.idempotency_key_list, redrive_pgboss.outbox_list,
                redrive_pgboss.attempt_timeline
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
REVOKE ALL ON redrive_pgboss.job_state FROM PUBLIC;
REVOKE ALL ON FUNCTION redrive_pgboss.retry_verdict(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.retry_verdict(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;


-- The targets, locked (Redrive's rows, then pg-boss's jobs, in id order) and read. Every target
-- is returned once, a missing one with version NULL. No job is ever held: pg-boss itself fails an
-- active job once its expire_seconds have passed, and a job it holds as active is not open. Not
-- granted: only the actions call it, through the skeleton.
CREATE FUNCTION redrive_pgboss.lock_action_targets(p_targets jsonb, p_action text)
RETURNS SETOF redrive.source_target
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM 1 FROM redrive.source_job s
     WHERE s.source = 'pgboss'
       AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY s.id FOR UPDATE;
    PERFORM 1 FROM redrive.source_job s
      JOIN pgboss.job j ON j.id = s.job_ref::uuid AND j.name = s.queue
     WHERE s.source = 'pgboss'
       AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY s.id FOR UPDATE OF j;
    RETURN QUERY
    SELECT t.id, t.version, d.version, d.job_ref, d.status, d.job_state,
           NULL::text, NULL::timestamptz, NULL::timestamptz, (d.j).data,
           CASE WHEN p_action = 'requeue' AND d.id IS NOT NULL
                THEN jsonb_build_object('id', t.id, 'status', d.status, 'job_state', d.job_state,
                                        'retry_count', (d.j).retry_count,
                                        'retry_limit', (d.j).retry_limit) END,
           NULL::jsonb
      FROM (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                   (e ->> 'version')::integer AS version
              FROM jsonb_array_elements(p_targets) e) t
      LEFT JOIN redrive_pgboss.job_state d ON d.id = t.id
     ORDER BY t.id;
END
$$;

-- Requeue (and edit_and_requeue) of the applied targets exactly as pg-boss 12's retryJobs
-- (dist/plans.js): state 'retry', one more attempt (retry_limit + 1), completed_on cleared and
-- start_after no earlier than now; earlier attempts kept;
-- with reset_attempts the whole retry budget again (retry_count 0, started_on NULL, retry_limit
-- as it was). An edit replaces the job's data too. Not granted.
CREATE FUNCTION redrive_pgboss.change_jobs(p_rows redrive.source_target[], p_action text,
                                           p_params jsonb)
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
    UPDATE pgboss.job j
       SET data = CASE WHEN p_action = 'edit_and_requeue' THEN p_params -> 'payload'
                       ELSE j.data END,
           state = 'retry',
           retry_limit = CASE WHEN v_reset THEN j.retry_limit ELSE j.retry_limit + 1 END,
           retry_count = CASE WHEN v_reset THEN 0 ELSE j.retry_count END,
           started_on = CASE WHEN v_reset THEN NULL ELSE j.started_on END,
           -- pg-boss 12 retryJobs: without these the deletion sweep (deletion_seconds after
           -- completed_on) removes the requeued job while it waits.
           completed_on = NULL,
           start_after = greatest(j.start_after, now())
      FROM redrive.source_job s
     WHERE s.id IN (SELECT r.id FROM unnest(p_rows) r) AND s.source = 'pgboss'
       AND j.name = s.queue AND j.id = s.job_ref::uuid AND j.state = 'failed';
END
$$;
REVOKE ALL ON FUNCTION redrive_pgboss.lock_action_targets(jsonb, text),
                       redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)
    FROM PUBLIC;

-- The actions (migration 5's signatures, roles checked by the skeleton: requeue and edit need
-- redrive_oncall, the others redrive_oncall or redrive_support).
CREATE OR REPLACE FUNCTION redrive_pgboss.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
                                                    p_reset_attempts boolean, p_reason text,
                                                    p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL,
                                                    p_bulk_id uuid DEFAULT NULL,
                                                    p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'pgboss', 'requeue', p_action_id, p_targets,
    jsonb_build_object('reset_attempts', p_reset_attempts, 'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_pgboss.lock_action_targets(jsonb, text)',
    'redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)',
    'pg-boss retry(): state retry');

CREATE OR REPLACE FUNCTION redrive_pgboss.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
                                                p_version integer, p_payload jsonb,
                                                p_reset_attempts boolean, p_reason text,
                                                p_ticket text DEFAULT NULL,
                                                p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'pgboss', 'edit_and_requeue', p_action_id,
    jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)),
    jsonb_build_object('payload', p_payload, 'reset_attempts', p_reset_attempts,
                       'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, NULL, NULL,
    'redrive_pgboss.lock_action_targets(jsonb, text)',
    'redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)', NULL);

-- pg-boss has no resolved state: the resolution is kept in redrive.source_job and the job stays
-- failed in pg-boss.
CREATE OR REPLACE FUNCTION redrive_pgboss.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
                                                    p_resolution text, p_note text,
                                                    p_reason text, p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL,
                                                    p_bulk_id uuid DEFAULT NULL,
                                                    p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'pgboss', 'resolve', p_action_id, p_targets,
    jsonb_build_object('resolution', p_resolution, 'note', p_note, 'reason', p_reason,
                       'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_pgboss.lock_action_targets(jsonb, text)', NULL, NULL);

CREATE OR REPLACE FUNCTION redrive_pgboss.claim_dead_letters(p_action_id uuid, p_targets jsonb,
                                                  p_release boolean, p_reason text,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'pgboss', CASE WHEN p_release THEN 'unclaim' WHEN NOT p_release THEN 'claim' END,
    p_action_id, p_targets, jsonb_build_object('reason', p_reason),
    p_reason, NULL, p_os_user, NULL, NULL,
    'redrive_pgboss.lock_action_targets(jsonb, text)', NULL, NULL);

-- pg-boss itself fails active jobs whose expire_seconds passed (maintenance, failJobsByTimeout),
-- so there is nothing to release here; the refusal bounds its lock waits like every action.
CREATE FUNCTION redrive_pgboss.release_stuck_jobs(p_action_id uuid, p_targets jsonb,
                                                  p_reason text, p_ticket text DEFAULT NULL,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    RAISE EXCEPTION 'pg-boss jobs are never stuck: pg-boss fails an active job once its '
                    'expire_seconds have passed' USING ERRCODE = 'feature_not_supported';
END
$$;

REVOKE ALL ON FUNCTION
    redrive_pgboss.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
    redrive_pgboss.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text),
    redrive_pgboss.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
    redrive_pgboss.claim_dead_letters(uuid, jsonb, boolean, text, text),
    redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text),
    redrive_pgboss.error_message(jsonb), redrive_pgboss.error_code(jsonb),
    redrive_pgboss.error_class(jsonb)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    redrive_pgboss.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
    redrive_pgboss.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text)
    TO redrive_oncall;
GRANT EXECUTE ON FUNCTION
    redrive_pgboss.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
    redrive_pgboss.claim_dead_letters(uuid, jsonb, boolean, text, text),
    redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text)
    TO redrive_oncall, redrive_support;
GRANT EXECUTE ON FUNCTION redrive_pgboss.error_message(jsonb), redrive_pgboss.error_code(jsonb),
                          redrive_pgboss.error_class(jsonb),
                          redrive_pgboss.classify_error(jsonb, text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
