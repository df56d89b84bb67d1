-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "graphile-worker": graphile-worker 0.17.x and 0.18.0 (its migrations 16-20) as
-- a source of dead letters, the whole adapter at version 14. Applied by `redrive install-source
-- graphile-worker` into schema redrive_graphile in one transaction; requires Redrive's own
-- schema (migration 6) and graphile-worker's schema "graphile_worker".
--
-- One file a line. Earlier releases applied versions 1 to 14 one by one; `redrive install-source`
-- replaces an adapter whose versions are not a beginning of this line's (an earlier release's, or
-- one made for another queue schema) with this file, in one transaction, keeping Redrive's record
-- of the jobs and the adapter's settings (docs/architecture.md, "Library versions and adapter
-- lines"). A change to the adapter is made here, and the file renamed to the next version, keeping
-- the name after the number (it names the line: install-source leaves alone an adapter of this line
-- newer than its own): every installed adapter is then replaced by it. What each earlier version
-- changed, and why, is in docs/security.md and in the history of this folder.
--
-- What graphile-worker 0.17 does, read from its source (sql/0000*.sql, dist/sql/*.js):
-- * Jobs live in graphile_worker._private_jobs (the public "jobs" view has no payload). A
--   worker takes a job with attempts = attempts + 1, locked_at, locked_by (getJobs).
-- * A failure (failJobs) sets last_error = the Error's message (no stack), run_at =
--   greatest(now(), run_at) + exp(least(attempts, 10)) seconds, and clears the lock; it is the
--   only unlock that moves run_at past greatest(now(), run_at): that is what the trigger
--   captures. A success (completeJobs) deletes the job.
-- * A job fails for good when attempts >= max_attempts and it is not locked (is_available =
--   false). A job whose worker died stays locked; workers clear locks older than 4 hours
--   (resetLockedAt). Until then this source shows it as stuck, released by an audited action.
-- * reschedule_jobs(job_ids, run_at, priority, attempts, max_attempts) is the documented way to
--   run jobs again; like every admin function it skips jobs locked less than 4 hours ago.
-- Dead-letter ids are 2^62 + the job's id: bigint like the queue's, disjoint from the ids of
-- other sources, and known without a row in redrive.source_job (a stuck job never failed).

REVOKE ALL ON SCHEMA redrive_graphile FROM PUBLIC;
GRANT USAGE ON SCHEMA redrive_graphile
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
REVOKE ALL ON redrive_graphile.schema_version FROM PUBLIC;

INSERT INTO redrive.source (name, schema_name, label, queue_schema, history_starts_at,
                            capabilities, adapter_version)
VALUES ('graphile-worker', 'redrive_graphile', 'graphile-worker', 'graphile_worker',
        clock_timestamp(), '{release_stuck}', 1)
ON CONFLICT (name) DO UPDATE SET adapter_version = EXCLUDED.adapter_version,
                                 capabilities = EXCLUDED.capabilities;

-- A job locked longer than this is shown as stuck (its worker is presumed dead) and may be
-- released. graphile-worker itself waits 4 hours.
CREATE TABLE redrive_graphile.adapter_settings (
    singleton   boolean  PRIMARY KEY DEFAULT true CHECK (singleton),
    stuck_after interval NOT NULL DEFAULT interval '15 minutes' CHECK (stuck_after > interval '0')
);
INSERT INTO redrive_graphile.adapter_settings DEFAULT VALUES;
GRANT SELECT ON redrive_graphile.adapter_settings
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

CREATE FUNCTION redrive_graphile.dead_letter_id(p_job_id bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 4611686018427387904 + p_job_id;

-- ---------------------------------------------------------------------------------------------
-- Capture: failures (and a later success of a job that failed before) into
-- redrive.source_attempt. SECURITY DEFINER: the worker's role needs no rights on Redrive.
CREATE OR REPLACE FUNCTION redrive_graphile.capture_failure() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
    v_queue text;
    v_kind text;
BEGIN
    -- Before anything reads a value of NEW or OLD: the type of each column read, from the row
    -- itself (docs/security.md, "The queue's own role"). OLD and NEW have the same row type.
    PERFORM redrive_graphile.refuse_retyped_columns(TG_RELID,
        ARRAY['id', 'job_queue_id', 'task_id', 'run_at', 'attempts', 'max_attempts',
              'last_error', 'key', 'locked_at', 'locked_by'],
        ARRAY[pg_catalog.pg_typeof(NEW.id), pg_catalog.pg_typeof(NEW.job_queue_id),
              pg_catalog.pg_typeof(NEW.task_id), pg_catalog.pg_typeof(NEW.run_at),
              pg_catalog.pg_typeof(NEW.attempts), pg_catalog.pg_typeof(NEW.max_attempts),
              pg_catalog.pg_typeof(NEW.last_error), pg_catalog.pg_typeof(NEW.key),
              pg_catalog.pg_typeof(OLD.locked_at), pg_catalog.pg_typeof(OLD.locked_by)],
        ARRAY['pg_catalog.int8', 'pg_catalog.int4', 'pg_catalog.int4', 'pg_catalog.timestamptz',
              'pg_catalog.int2', 'pg_catalog.int2', 'pg_catalog.text', 'pg_catalog.text',
              'pg_catalog.timestamptz', 'pg_catalog.text']::pg_catalog.regtype[]);
    -- No cast on the queue's own types (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_cast k
                WHERE k.castsource OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) TG_RELID)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) TG_RELID
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))
                   OR k.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) TG_RELID)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) TG_RELID
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))) THEN
        RAISE EXCEPTION 'a cast on a type of the queue''s job table exists: Redrive''s '
                        'capture would run it as the installer'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- force_unlock_workers and the 4-hour stale-lock reset unlock too, without a failure.
    IF NOT (NEW.run_at > greatest(now(), OLD.run_at)) THEN
        RETURN NULL;
    END IF;
    SELECT t.identifier INTO v_kind FROM redrive_graphile.queue_tasks() t WHERE t.id = NEW.task_id;
    SELECT q.queue_name INTO v_queue
      FROM redrive_graphile.queue_job_queues() q WHERE q.id = NEW.job_queue_id;
    INSERT INTO redrive.source_job AS s (id, source, job_ref, queue, kind, failures,
                                         first_failed_at, last_failed_at, job_key)
    VALUES (redrive_graphile.dead_letter_id(NEW.id), 'graphile-worker', NEW.id::text,
            coalesce(v_queue, '(none)'), coalesce(v_kind, '?'), 1, v_now, v_now, NEW.key)
    ON CONFLICT (id) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now, job_key = coalesce(NEW.key, s.job_key)
    RETURNING s.id INTO v_id;
    INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                        outcome, error_class, error_code, message, stack_trace,
                                        worker_id, backoff_ms)
    VALUES (v_id, NEW.attempts, least(OLD.locked_at, v_now), v_now, 'failed',
            (SELECT w.error_class
               FROM redrive.classify_source_error_why('graphile-worker', NEW.last_error, NULL,
                                                      NULL) w),
            NULL, NEW.last_error, NULL, OLD.locked_by,
            -- A retry due at infinity has no finite backoff (-infinity never passes the check
            -- above).
            CASE WHEN NEW.attempts < NEW.max_attempts AND isfinite(NEW.run_at)
                 THEN greatest(0, (extract(epoch FROM (NEW.run_at - v_now)) * 1000)::bigint) END);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION redrive_graphile.capture_success() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
BEGIN
    -- Before anything reads a value of OLD: the type of each column read, from the row itself
    -- (docs/security.md, "The queue's own role").
    PERFORM redrive_graphile.refuse_retyped_columns(TG_RELID,
        ARRAY['id', 'attempts', 'locked_at', 'locked_by'],
        ARRAY[pg_catalog.pg_typeof(OLD.id), pg_catalog.pg_typeof(OLD.attempts),
              pg_catalog.pg_typeof(OLD.locked_at), pg_catalog.pg_typeof(OLD.locked_by)],
        ARRAY['pg_catalog.int8', 'pg_catalog.int2', 'pg_catalog.timestamptz',
              'pg_catalog.text']::pg_catalog.regtype[]);
    -- No cast on the queue's own types (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_cast k
                WHERE k.castsource OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) TG_RELID)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) TG_RELID
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))
                   OR k.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) TG_RELID)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) TG_RELID
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))) THEN
        RAISE EXCEPTION 'a cast on a type of the queue''s job table exists: Redrive''s '
                        'capture would run it as the installer'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    UPDATE redrive.source_job SET succeeded_at = v_now, version = version + 1, updated_at = v_now
     WHERE id = redrive_graphile.dead_letter_id(OLD.id);
    IF FOUND THEN
        INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                            outcome, worker_id)
        VALUES (redrive_graphile.dead_letter_id(OLD.id), OLD.attempts,
                least(OLD.locked_at, v_now), v_now, 'succeeded', OLD.locked_by);
    END IF;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION redrive_graphile.capture_failure(), redrive_graphile.capture_success()
    FROM PUBLIC;

CREATE TRIGGER redrive_capture_failure
    AFTER UPDATE ON graphile_worker._private_jobs
    FOR EACH ROW WHEN (OLD.locked_at IS NOT NULL AND NEW.locked_at IS NULL
                       AND NEW.attempts = OLD.attempts)
    EXECUTE FUNCTION redrive_graphile.capture_failure();
-- A worker deletes the job it completed while still holding it; only jobs that failed before
-- (they keep last_error) or were released (attempts > 1) can have a row to update.
CREATE TRIGGER redrive_capture_success
    AFTER DELETE ON graphile_worker._private_jobs
    FOR EACH ROW WHEN (OLD.locked_at IS NOT NULL
                       AND (OLD.last_error IS NOT NULL OR OLD.attempts > 1))
    EXECUTE FUNCTION redrive_graphile.capture_success();

-- History starts now: jobs that already failed for good keep the message graphile-worker kept.
-- When they failed is known from run_at, which the failure set to now() + exp(attempts) s.
INSERT INTO redrive.source_job (id, source, job_ref, queue, kind, failures, first_failed_at,
                                last_failed_at)
SELECT redrive_graphile.dead_letter_id(j.id), 'graphile-worker', j.id::text,
       coalesce(q.queue_name, '(none)'), t.identifier, 0,
       j.run_at - exp(least(j.attempts, 10)) * interval '1 second',
       j.run_at - exp(least(j.attempts, 10)) * interval '1 second'
  FROM graphile_worker._private_jobs j
  JOIN graphile_worker._private_tasks t ON t.id = j.task_id
  LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
 WHERE j.attempts >= j.max_attempts AND j.locked_at IS NULL
ON CONFLICT (id) DO NOTHING;
INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at, outcome,
                                    error_class, message, captured_by)
SELECT s.id, j.attempts, s.last_failed_at, s.last_failed_at, 'failed',
       redrive.classify_source_error(j.last_error, NULL, NULL), j.last_error, 'install'
  FROM graphile_worker._private_jobs j
  JOIN redrive.source_job s ON s.id = redrive_graphile.dead_letter_id(j.id)
 WHERE j.attempts >= j.max_attempts AND j.locked_at IS NULL AND j.last_error IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM redrive.source_attempt a WHERE a.source_job_id = s.id);

-- Times at the ends of timestamptz's range (Redrive's migration 34,
-- docs/domain.md "Times at the ends of the range"). The queue may hold 'infinity', '-infinity' or
-- a year near 294276 in a job's times; no read of the console fails on one:
-- - the retry history's duration is NULL when either end is infinite, and computed from each
--   end's epoch, so that a span of centuries neither fails nor overflows;
-- - the overview's buckets count an instant only when it is finite and before 294000 (date_bin()
--   from the epoch overflows in the last years of the range).

CREATE OR REPLACE VIEW redrive_graphile.attempt_history AS
SELECT a.source_job_id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       CASE WHEN isfinite(a.started_at) AND isfinite(a.finished_at)
            THEN round((extract(epoch FROM a.finished_at) - extract(epoch FROM a.started_at))
                       * 1000)::bigint END AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'graphile-worker';

-- No idempotency-key records, no outbox commands (see the pg-boss source).
CREATE VIEW redrive_graphile.idempotency_key_list AS
SELECT NULL::text AS scope, NULL::text AS key, NULL::text AS request_hash, NULL::text AS state,
       NULL::text AS job_ref, NULL::text AS locked_by, NULL::timestamptz AS locked_until,
       NULL::text AS result_text, NULL::text AS error_message, NULL::text AS conflicting_hash,
       NULL::integer AS conflict_count, NULL::timestamptz AS last_conflict_at,
       NULL::timestamptz AS created_at, NULL::timestamptz AS updated_at,
       NULL::timestamptz AS expires_at, NULL::integer AS version, NULL::boolean AS stuck
 WHERE false;

CREATE VIEW redrive_graphile.outbox_list AS
SELECT NULL::bigint AS id, NULL::text AS command, NULL::text AS target_type,
       NULL::text AS target_id, NULL::text AS payload_text, NULL::text AS status,
       NULL::integer AS attempts, NULL::timestamptz AS available_at,
       NULL::timestamptz AS created_at, NULL::timestamptz AS processed_at,
       NULL::text AS last_error, NULL::uuid AS action_id
 WHERE false;

CREATE VIEW redrive_graphile.attempt_timeline AS
SELECT a.started_at, a.outcome, a.error_class
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'graphile-worker';
GRANT EXECUTE ON FUNCTION redrive_graphile.dead_letter_id(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- ---------------------------------------------------------------------------------------------
-- The actions: Redrive's rows locked and changed by the installer's functions, through the
-- skeleton (redrive.run_source_action); graphile-worker's rows only through the confined
-- functions.
CREATE OR REPLACE FUNCTION redrive_graphile.lock_action_targets(p_targets jsonb, p_action text)
RETURNS SETOF redrive.source_target
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO redrive.source_job (id, source, job_ref, queue, kind)
    SELECT d.id, 'graphile-worker', d.job_ref, d.queue, d.kind
      FROM redrive_graphile.job_state d
     WHERE d.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
       AND d.row_version IS NULL
     ORDER BY d.id
    ON CONFLICT DO NOTHING;
    PERFORM 1 FROM redrive.source_job s
     WHERE s.source = 'graphile-worker'
       AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY s.id FOR UPDATE;
    PERFORM redrive_graphile.queue_lock_jobs(
        ARRAY(SELECT (e ->> 'id')::bigint - 4611686018427387904
                FROM jsonb_array_elements(p_targets) e));
    RETURN QUERY
    SELECT t.id, t.version, d.version, d.job_ref, d.status, d.job_state,
           d.locked_by, d.locked_at, d.stuck_at, d.payload::jsonb,
           CASE WHEN d.id IS NULL THEN NULL
                WHEN p_action = 'requeue'
                THEN jsonb_build_object('id', t.id, 'status', d.status, 'attempts', d.attempts,
                                        'max_attempts', d.max_attempts)
                WHEN p_action = 'release_stuck'
                THEN jsonb_build_object('id', t.id, 'locked_by', d.locked_by,
                                        'locked_at', d.locked_at, 'attempts', d.attempts,
                                        'max_attempts', d.max_attempts) END,
           jsonb_build_object('job_id', d.job_id, 'attempts', d.attempts,
                              'max_attempts', d.max_attempts, 'job_queue_id', d.job_queue_id)
      FROM (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                   (e ->> 'version')::integer AS version
              FROM jsonb_array_elements(p_targets) e) t
      LEFT JOIN redrive_graphile.dead_letter_state d ON d.id = t.id
     ORDER BY t.id;
END
$$;

-- graphile-worker has no resolved state: the resolution is kept in redrive.source_job and the
-- job stays failed in graphile-worker.
CREATE OR REPLACE FUNCTION redrive_graphile.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
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
    'graphile-worker', 'resolve', p_action_id, p_targets,
    jsonb_build_object('resolution', p_resolution, 'note', p_note, 'reason', p_reason,
                       'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_graphile.lock_action_targets(jsonb, text)', NULL, NULL);

-- Claim or release the claim (roles: oncall, support).
CREATE OR REPLACE FUNCTION redrive_graphile.claim_dead_letters(p_action_id uuid, p_targets jsonb,
                                                    p_release boolean, p_reason text,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', CASE WHEN p_release THEN 'unclaim' WHEN NOT p_release THEN 'claim' END,
    p_action_id, p_targets, jsonb_build_object('reason', p_reason),
    p_reason, NULL, p_os_user, NULL, NULL,
    'redrive_graphile.lock_action_targets(jsonb, text)', NULL, NULL);

-- The queue's side of an action on its applied targets. Not granted.
-- * requeue, edit_and_requeue: graphile-worker's documented admin function reschedule_jobs, once
--   per job (max_attempts differs): run now, with one more attempt (max_attempts =
--   attempts + 1) or, with reset_attempts, attempts back to 0; an edit replaces the payload first.
-- * release_stuck: what graphile-worker does to a lock older than 4 hours (resetLockedAt:
--   locked_at and locked_by cleared, run_at at least now, the job's named queue unlocked if that
--   worker held it), for these jobs and their workers only; the lost attempt is recorded as
--   abandoned. The job then runs again if it has attempts left, or is failed for good.
CREATE OR REPLACE FUNCTION redrive_graphile.change_jobs(p_rows redrive.source_target[],
                                                        p_action text, p_params jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c redrive.source_target;
    v_job bigint;
    v_reset boolean := (p_params ->> 'reset_attempts')::boolean;
    v_now timestamptz := clock_timestamp();
BEGIN
    IF p_action NOT IN ('requeue', 'edit_and_requeue', 'release_stuck') THEN
        RAISE EXCEPTION 'graphile-worker jobs change only on a requeue or a release, not on %',
                        p_action USING ERRCODE = 'feature_not_supported';
    END IF;
    FOREACH c IN ARRAY p_rows LOOP
        v_job := (c.job ->> 'job_id')::bigint;
        IF p_action = 'release_stuck' THEN
            INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at,
                                                finished_at, outcome, error_class, error_code,
                                                message, worker_id)
            VALUES (c.id, (c.job ->> 'attempts')::integer, least(c.held_since, v_now), v_now,
                    'abandoned', 'ambiguous', 'worker_lost',
                    format('worker %s held the job from %s without a result; released by %s: %s',
                           c.held_by, c.held_since, session_user, p_params ->> 'reason'),
                    c.held_by);
            PERFORM redrive_graphile.queue_release_job(v_job, c.held_by,
                                                       (c.job ->> 'job_queue_id')::integer);
        ELSE
            PERFORM redrive_graphile.queue_reschedule_job(
                v_job,
                CASE WHEN p_action = 'edit_and_requeue' THEN (p_params -> 'payload')::json END,
                CASE WHEN v_reset THEN 0 END,
                CASE WHEN v_reset THEN NULL
                     ELSE greatest((c.job ->> 'max_attempts')::integer,
                                   (c.job ->> 'attempts')::integer + 1) END);
        END IF;
    END LOOP;
END
$$;

-- The actions (migration 5's signatures, release_stuck_jobs from migration 6; roles checked by
-- the skeleton: requeue and edit need redrive_oncall, the others redrive_oncall or
-- redrive_support).
CREATE OR REPLACE FUNCTION redrive_graphile.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
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
    'graphile-worker', 'requeue', p_action_id, p_targets,
    jsonb_build_object('reset_attempts', p_reset_attempts, 'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_graphile.lock_action_targets(jsonb, text)',
    'redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)',
    'graphile_worker.reschedule_jobs');

-- Edit the payload and requeue (roles: oncall); the audit entry keeps both.
CREATE OR REPLACE FUNCTION redrive_graphile.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
                                                  p_version integer, p_payload jsonb,
                                                  p_reset_attempts boolean, p_reason text,
                                                  p_ticket text DEFAULT NULL,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', 'edit_and_requeue', p_action_id,
    jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)),
    jsonb_build_object('payload', p_payload, 'reset_attempts', p_reset_attempts,
                       'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, NULL, NULL,
    'redrive_graphile.lock_action_targets(jsonb, text)',
    'redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)', NULL);

-- Release stuck jobs: for each confirmed job still held, and held longer than
-- adapter_settings.stuck_after, graphile-worker's resetLockedAt (change_jobs above). A job held
-- more recently is refused: its worker may be alive.
CREATE OR REPLACE FUNCTION redrive_graphile.release_stuck_jobs(p_action_id uuid, p_targets jsonb,
                                                    p_reason text, p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', 'release_stuck', p_action_id, p_targets,
    jsonb_build_object('reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, NULL, NULL,
    'redrive_graphile.lock_action_targets(jsonb, text)',
    'redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)',
    'graphile-worker resetLockedAt, for these jobs');

REVOKE ALL ON FUNCTION
    redrive_graphile.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
    redrive_graphile.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text),
    redrive_graphile.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
    redrive_graphile.claim_dead_letters(uuid, jsonb, boolean, text, text),
    redrive_graphile.release_stuck_jobs(uuid, jsonb, text, text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    redrive_graphile.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
    redrive_graphile.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text)
    TO redrive_oncall;
GRANT EXECUTE ON FUNCTION
    redrive_graphile.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
    redrive_graphile.claim_dead_letters(uuid, jsonb, boolean, text, text),
    redrive_graphile.release_stuck_jobs(uuid, jsonb, text, text, text)
    TO redrive_oncall, redrive_support;
REVOKE ALL ON FUNCTION redrive_graphile.lock_action_targets(jsonb, text),
                       redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)
    FROM PUBLIC;
-- Keys of failed jobs seen before the install.
UPDATE redrive.source_job s SET job_key = j.key
  FROM graphile_worker._private_jobs j
 WHERE s.source = 'graphile-worker' AND j.id = s.job_ref::bigint AND j.key IS NOT NULL
   AND s.job_key IS NULL;

-- ---------------------------------------------------------------------------------------------
-- The confined functions: code the queue's application role can plant never runs with Redrive's
-- rights or an operator's (docs/security.md, "The queue's own role", which says why, and "Nothing
-- planted outlives the confined call"). graphile-worker's admin function reschedule_jobs is the
-- application's too: a replaced one runs as the caller, now the confined role.
--
-- Every read and every change of graphile-worker's tables, and every call of its functions,
-- happens inside a SECURITY DEFINER function owned by redrive_graphile_queue (NOLOGIN, a member
-- of nothing, no USAGE on Redrive's schemas, SELECT and UPDATE on _private_jobs and
-- _private_job_queues, SELECT on _private_tasks): the views, the actions and the capture trigger
-- (it read the task and queue names as the installer, on the worker's own UPDATE).
-- graphile-worker enables row level security on its tables with no policy, so the queue's owner
-- gives redrive_graphile_queue a policy on each (install-source prints the commands).
--
-- Each confined function, at every depth (inside a trigger too):
--  - ends by refusing while a deferrable trigger other than a foreign key's exists in the
--    database, since it would fire at the operator's COMMIT, as the operator (outside a trigger);
--  - records every setting of the session (pg_settings) and its cursors as it starts, and refuses
--    at its end when one differs, so that the installer-owned code that called it never goes on
--    under a search_path (or another setting) planted inside the call;
--  - refuses while a cast on a type of the queue's exists, and hands on rows only while every
--    column of the tables it read is of the library's own kind of type (below).
-- The checks are written out in each function rather than called: the confined role has no
-- USAGE on this schema (so that it can name, call or alter none of its functions), and a helper
-- here could not be called from inside a confined function.

DO $$
DECLARE
    v_super boolean := (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user);
    -- The queue's schema by its table (the installer rewrites qualified names for another one).
    v_queue regnamespace := (SELECT c.relnamespace::regnamespace FROM pg_catalog.pg_class c
                              WHERE c.oid = 'graphile_worker._private_jobs'::regclass);
    r record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'redrive_graphile_queue') THEN
        BEGIN
            CREATE ROLE redrive_graphile_queue NOLOGIN NOINHERIT;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN
                NULL; -- another database's install created it meanwhile
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'permission denied to create role redrive_graphile_queue: the role '
                                'that installs a source needs CREATEROLE (ALTER ROLE % CREATEROLE)',
                                current_user USING ERRCODE = 'insufficient_privilege';
        END;
    END IF;
    -- A role of that name made by someone else must be as confined as the one made here.
    SELECT rolsuper, rolcreaterole, rolcreatedb, rolcanlogin, rolbypassrls, rolreplication
      INTO r FROM pg_catalog.pg_roles WHERE rolname = 'redrive_graphile_queue';
    IF r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolcanlogin OR r.rolbypassrls
       OR r.rolreplication
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m
                   WHERE m.member = 'redrive_graphile_queue'::regrole) THEN
        RAISE EXCEPTION 'role redrive_graphile_queue exists with more than the adapter gives it '
                        '(a login, an attribute or a membership): drop it and install again'
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- ALTER ... OWNER TO needs the installer to be a member (of this role, never the reverse).
    IF NOT v_super AND NOT pg_catalog.pg_has_role(current_user, 'redrive_graphile_queue', 'MEMBER')
    THEN
        EXECUTE format('GRANT redrive_graphile_queue TO %I', current_user);
    END IF;

    -- What the confined functions need on pg-boss's tables, and nothing else.
    EXECUTE format('GRANT USAGE ON SCHEMA %s TO redrive_graphile_queue', v_queue);
    GRANT SELECT, UPDATE ON graphile_worker._private_jobs, graphile_worker._private_job_queues
        TO redrive_graphile_queue;
    GRANT SELECT ON graphile_worker._private_tasks TO redrive_graphile_queue;
    -- GRANT by a role without the grant option only warns: check what it got.
    IF NOT (pg_catalog.has_schema_privilege('redrive_graphile_queue', v_queue::oid, 'USAGE')
            AND pg_catalog.has_table_privilege('redrive_graphile_queue',
                                               'graphile_worker._private_jobs', 'SELECT, UPDATE')
            AND pg_catalog.has_table_privilege('redrive_graphile_queue',
                                               'graphile_worker._private_job_queues',
                                               'SELECT, UPDATE')
            AND pg_catalog.has_table_privilege('redrive_graphile_queue',
                                               'graphile_worker._private_tasks', 'SELECT')) THEN
        RAISE EXCEPTION 'role % cannot pass on its rights on schema % to '
                        'redrive_graphile_queue (the role the adapter reads and changes graphile-worker''s '
                        'tables as): the queue''s application role must grant them WITH GRANT '
                        'OPTION', current_user, v_queue
              USING ERRCODE = 'insufficient_privilege',
                    HINT = format('as the owner of schema %1$s: GRANT USAGE ON SCHEMA %1$s '
                                  'TO %2$I WITH GRANT OPTION; GRANT TRIGGER, SELECT, INSERT, '
                                  'UPDATE, DELETE ON ALL TABLES IN SCHEMA %1$s TO %2$I WITH '
                                  'GRANT OPTION;', v_queue, current_user);
    END IF;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The confined functions (owned by redrive_graphile_queue, not granted to PUBLIC).

-- graphile-worker's jobs, task names and named queues, as its tables hold them: what the views
-- read instead of the tables.
CREATE OR REPLACE FUNCTION redrive_graphile.queue_jobs()
RETURNS SETOF graphile_worker._private_jobs
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (docs/security.md, "The queue's own role").
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (docs/security.md, "The queue's own role").
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    RETURN QUERY SELECT j.* FROM graphile_worker._private_jobs j;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth
    -- (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
                  ]::pg_catalog.oid[])
                  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                  AND t.oid OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid
                  AND NOT (t.typnamespace OPERATOR(pg_catalog.=) c.relnamespace
                           AND (t.typtype OPERATOR(pg_catalog.=) 'e'
                                OR (e.typtype OPERATOR(pg_catalog.=) 'e'
                                    AND e.typnamespace OPERATOR(pg_catalog.=) c.relnamespace))))
    THEN
        RAISE EXCEPTION 'a column of the queue''s tables has a type that is neither built in nor '
                        'an enum of the queue''s schema: Redrive''s functions would convert its '
                        'values through casts its owner makes'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (docs/security.md, "The queue's own role").
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF pg_catalog.pg_trigger_depth() OPERATOR(pg_catalog.=) 0 THEN
        SELECT t.tgname INTO v_trigger FROM pg_catalog.pg_trigger t
         WHERE t.tgdeferrable
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint c
                            WHERE c.oid OPERATOR(pg_catalog.=) t.tgconstraint
                              AND c.contype OPERATOR(pg_catalog.=) 'f')
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'deferrable trigger % exists in this database: the queue''s jobs are '
                            'not read or changed while something could run at the operator''s '
                            'COMMIT', pg_catalog.quote_ident(v_trigger)
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_cursors c WHERE c.is_holdable)
           OR coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                   EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                   ORDER BY c.name)
                                     FROM pg_catalog.pg_cursors c), '')
              OPERATOR(pg_catalog.<>) coalesce(v_cursors, '') THEN
            RAISE EXCEPTION 'a cursor was declared or replaced while the queue''s jobs were read '
                            'or changed: it would run at the operator''s COMMIT or next FETCH'
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION redrive_graphile.queue_tasks()
RETURNS TABLE (id integer, identifier text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (docs/security.md, "The queue's own role").
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (docs/security.md, "The queue's own role").
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    RETURN QUERY SELECT t.id, t.identifier FROM graphile_worker._private_tasks t;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth
    -- (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
                  ]::pg_catalog.oid[])
                  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                  AND t.oid OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid
                  AND NOT (t.typnamespace OPERATOR(pg_catalog.=) c.relnamespace
                           AND (t.typtype OPERATOR(pg_catalog.=) 'e'
                                OR (e.typtype OPERATOR(pg_catalog.=) 'e'
                                    AND e.typnamespace OPERATOR(pg_catalog.=) c.relnamespace))))
    THEN
        RAISE EXCEPTION 'a column of the queue''s tables has a type that is neither built in nor '
                        'an enum of the queue''s schema: Redrive''s functions would convert its '
                        'values through casts its owner makes'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (docs/security.md, "The queue's own role").
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF pg_catalog.pg_trigger_depth() OPERATOR(pg_catalog.=) 0 THEN
        SELECT t.tgname INTO v_trigger FROM pg_catalog.pg_trigger t
         WHERE t.tgdeferrable
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint c
                            WHERE c.oid OPERATOR(pg_catalog.=) t.tgconstraint
                              AND c.contype OPERATOR(pg_catalog.=) 'f')
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'deferrable trigger % exists in this database: the queue''s jobs are '
                            'not read or changed while something could run at the operator''s '
                            'COMMIT', pg_catalog.quote_ident(v_trigger)
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_cursors c WHERE c.is_holdable)
           OR coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                   EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                   ORDER BY c.name)
                                     FROM pg_catalog.pg_cursors c), '')
              OPERATOR(pg_catalog.<>) coalesce(v_cursors, '') THEN
            RAISE EXCEPTION 'a cursor was declared or replaced while the queue''s jobs were read '
                            'or changed: it would run at the operator''s COMMIT or next FETCH'
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
END
$$;

-- The confined functions hand on the queue's rows
-- only while every column of the tables they read is of the library's own kind of type
-- (docs/security.md, "The queue's own role").
--
-- The application owns the queue's tables and may add a column, or turn one into a domain over
-- a type of its own (an enum of another schema, or an array of one). PostgreSQL finds casts
-- through a domain's base type and an array's element type, and the json builders look up a cast
-- to json of any type that is not built in, at run time. The installer-owned code that goes on
-- with the rows these functions return reads some of their fields by name when it runs (a
-- PL/pgSQL `(d.j).retry_count` handed to jsonb_build_object): a column added after the install,
-- of such a type with a cast of the application's, ran the application's function as the
-- installer during an operator's requeue (with a superuser installer, a shell command through
-- COPY TO PROGRAM). install-source refuses such a column before it reads anything; each
-- confined function refuses it too, after its read (which holds the tables' lock, so the
-- columns cannot change until the transaction ends) and before anything goes on with its rows:
-- every column must be of a built-in type (created with the cluster, OID below 16384; a cast
-- between two of them needs a superuser) or an enum of the table's own schema, or an array of
-- one, whose casts the check that follows refuses.

CREATE OR REPLACE FUNCTION redrive_graphile.queue_job_queues()
RETURNS TABLE (id integer, queue_name text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (docs/security.md, "The queue's own role").
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (docs/security.md, "The queue's own role").
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    RETURN QUERY SELECT q.id, q.queue_name FROM graphile_worker._private_job_queues q;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth
    -- (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
                  ]::pg_catalog.oid[])
                  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                  AND t.oid OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid
                  AND NOT (t.typnamespace OPERATOR(pg_catalog.=) c.relnamespace
                           AND (t.typtype OPERATOR(pg_catalog.=) 'e'
                                OR (e.typtype OPERATOR(pg_catalog.=) 'e'
                                    AND e.typnamespace OPERATOR(pg_catalog.=) c.relnamespace))))
    THEN
        RAISE EXCEPTION 'a column of the queue''s tables has a type that is neither built in nor '
                        'an enum of the queue''s schema: Redrive''s functions would convert its '
                        'values through casts its owner makes'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (docs/security.md, "The queue's own role").
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF pg_catalog.pg_trigger_depth() OPERATOR(pg_catalog.=) 0 THEN
        SELECT t.tgname INTO v_trigger FROM pg_catalog.pg_trigger t
         WHERE t.tgdeferrable
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint c
                            WHERE c.oid OPERATOR(pg_catalog.=) t.tgconstraint
                              AND c.contype OPERATOR(pg_catalog.=) 'f')
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'deferrable trigger % exists in this database: the queue''s jobs are '
                            'not read or changed while something could run at the operator''s '
                            'COMMIT', pg_catalog.quote_ident(v_trigger)
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_cursors c WHERE c.is_holdable)
           OR coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                   EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                   ORDER BY c.name)
                                     FROM pg_catalog.pg_cursors c), '')
              OPERATOR(pg_catalog.<>) coalesce(v_cursors, '') THEN
            RAISE EXCEPTION 'a cursor was declared or replaced while the queue''s jobs were read '
                            'or changed: it would run at the operator''s COMMIT or next FETCH'
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The reads, graphile-worker's rows from the confined functions.
CREATE OR REPLACE VIEW redrive_graphile.job_state AS
SELECT redrive_graphile.dead_letter_id(j.id) AS id, j.id::text AS job_ref,
       coalesce(q.queue_name, '(none)') AS queue, t.identifier AS kind,
       (j.locked_at IS NOT NULL AND j.locked_at < now() - cfg.stuck_after) AS stuck,
       (j.locked_at IS NULL AND j.attempts >= j.max_attempts) AS failed,
       CASE WHEN j.locked_at IS NOT NULL AND j.locked_at < now() - cfg.stuck_after THEN 'stuck'
            WHEN j.locked_at IS NOT NULL THEN 'locked'
            WHEN j.attempts >= j.max_attempts THEN 'failed'
            ELSE 'waiting' END AS job_state,
       j.locked_at + cfg.stuck_after AS stuck_at, j.attempts::integer AS attempts,
       j.max_attempts::integer AS max_attempts, j.last_error, coalesce(j.key, s.job_key) AS key, j.locked_at, j.locked_by,
       j.run_at, j.created_at, j.payload, j.priority, j.revision, j.flags, j.job_queue_id,
       j.id AS job_id, s.version AS row_version, s.last_failed_at, s.claimed_by, s.claimed_at,
       s.resolution, s.resolution_note, s.resolved_by, s.resolved_at, s.updated_at
  FROM redrive_graphile.queue_jobs() j
  JOIN redrive_graphile.queue_tasks() t ON t.id = j.task_id
  LEFT JOIN redrive_graphile.queue_job_queues() q ON q.id = j.job_queue_id
  LEFT JOIN redrive.source_job s ON s.id = redrive_graphile.dead_letter_id(j.id)
  CROSS JOIN redrive_graphile.adapter_settings cfg
UNION ALL
-- Jobs graphile-worker no longer has (it deletes a job that succeeded, and a job can be removed
-- with remove_job or a reset): Redrive's record keeps the case openable, with its history.
SELECT s.id, s.job_ref, s.queue, s.kind, false AS stuck, false AS failed, 'deleted' AS job_state,
       j.locked_at AS stuck_at, coalesce(la.attempt_no, 0) AS attempts,
       coalesce(la.attempt_no, 0) AS max_attempts, la.message AS last_error,
       s.job_key AS key, j.locked_at, j.locked_by, j.run_at, j.created_at, j.payload, j.priority,
       j.revision, j.flags, j.job_queue_id, s.job_ref::bigint AS job_id, s.version AS row_version,
       s.last_failed_at, s.claimed_by, s.claimed_at,
       CASE WHEN s.succeeded_at IS NOT NULL THEN 'succeeded_after_requeue'
            ELSE s.resolution END AS resolution,
       s.resolution_note, s.resolved_by, coalesce(s.resolved_at, s.succeeded_at) AS resolved_at,
       s.updated_at
  FROM redrive.source_job s
  LEFT JOIN (SELECT (NULL::graphile_worker._private_jobs).*) j ON false
  LEFT JOIN LATERAL (SELECT a.attempt_no, a.message FROM redrive.source_attempt a
                      WHERE a.source_job_id = s.id
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true
 WHERE s.source = 'graphile-worker'
   AND s.job_ref::bigint NOT IN (SELECT g.id FROM redrive_graphile.queue_jobs() g);

CREATE OR REPLACE VIEW redrive_graphile.dead_letter_state AS
SELECT d.*,
       CASE WHEN d.stuck THEN 'open'
            WHEN d.job_state = 'deleted' THEN 'resolved'
            WHEN NOT d.failed THEN 'requeued'
            WHEN d.resolved_at IS NOT NULL THEN 'resolved' ELSE 'open' END AS status,
       CASE WHEN d.stuck THEN 'stuck'
            WHEN d.last_error = 'Manually marked as failed' THEN 'permanent'
            ELSE 'exhausted' END AS reason,
       CASE WHEN d.stuck OR (d.failed AND la.outcome = 'abandoned') THEN 'ambiguous'
            ELSE (SELECT w.error_class
                    FROM redrive.classify_source_error_why('graphile-worker', d.last_error, NULL,
                                                           NULL) w) END AS error_class,
       CASE WHEN d.stuck OR (d.failed AND la.outcome = 'abandoned') THEN 'worker_lost' END
           AS error_code,
       CASE WHEN d.stuck
            THEN format('locked by worker %s since %s without a result: the worker is presumed '
                        'dead (graphile-worker keeps the lock for 4 hours)', d.locked_by,
                        d.locked_at)
            WHEN d.failed AND la.outcome = 'abandoned'
            THEN 'worker lost during the attempt: ' || coalesce(la.message, 'no result recorded')
            ELSE d.last_error END AS message,
       CASE WHEN d.stuck THEN d.stuck_at
            ELSE coalesce(d.last_failed_at,
                          d.run_at - exp(least(d.attempts, 10)) * interval '1 second') END
           AS dead_at,
       coalesce(d.row_version, 1) AS version
  FROM redrive_graphile.job_state d
  LEFT JOIN LATERAL (SELECT a.outcome, a.message FROM redrive.source_attempt a
                      WHERE a.source_job_id = d.id AND d.failed
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true;

-- The list. The read contract's column state_note (Redrive migration 22) is NULL:
-- graphile-worker keeps a failed job where it is, so there is nothing to add to its status.
CREATE OR REPLACE VIEW redrive_graphile.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.message AS last_error, d.attempts, d.key AS idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.message) AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, coalesce(d.updated_at, d.dead_at) AS updated_at,
       'graphile-worker'::text AS source, NULL::text AS state_note
  FROM redrive_graphile.dead_letter_state d
 WHERE d.stuck OR d.failed;

-- The case view also finds a job that was requeued and has not finished yet (status requeued).
CREATE VIEW redrive_graphile.dead_letter_detail AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.message AS last_error, NULL::text AS stack_trace, d.attempts,
       d.key AS idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.message) AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at,
       d.payload::text AS payload_text, NULL::bytea AS payload_bytes,
       octet_length(coalesce(d.payload::text, '')) AS payload_size,
       jsonb_build_object('priority', d.priority, 'revision', d.revision, 'flags', d.flags,
                          'job_key', d.key, 'last_error', d.last_error) AS headers,
       NULL::text AS entity_id, NULL::bigint AS event_seq, NULL::timestamptz AS event_at,
       d.job_state, d.attempts AS job_attempt, d.max_attempts, d.locked_by,
       d.stuck_at AS locked_until, d.run_at, d.created_at AS job_created_at,
       NULL::timestamptz AS deadline_at, 'graphile-worker'::text AS source
  FROM redrive_graphile.dead_letter_state d
 WHERE d.stuck OR d.failed OR d.row_version IS NOT NULL;

CREATE VIEW redrive_graphile.failure_group_list AS
SELECT d.fingerprint, min(d.kind) AS kind, min(d.error_class) AS error_class,
       min(d.error_code) AS error_code, min(d.last_error) AS sample_message,
       min(d.dead_at) AS first_seen
  FROM redrive_graphile.dead_letter_list d
 GROUP BY d.fingerprint;

CREATE FUNCTION redrive_graphile.retry_verdict(p_dead_letter bigint)
RETURNS TABLE (severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- Reads only what the caller may read (this function runs as the caller).
    WITH d AS (SELECT * FROM redrive_graphile.dead_letter_detail WHERE id = p_dead_letter)
    SELECT 'block', 'job_leased',
           format('Worker %s still holds this job (locked since %s): it may be running right '
                  'now, or its worker died. Release it first.', d.locked_by,
                  d.locked_until - (SELECT stuck_after FROM redrive_graphile.adapter_settings))
      FROM d WHERE d.job_state = 'stuck'
    UNION ALL
    SELECT 'warn', 'ambiguous',
           'The last failure was ambiguous (a timeout or a lost worker): the side effect may '
           'have happened. Check the receiving side before requeueing.'
      FROM d WHERE d.error_class = 'ambiguous'
    UNION ALL
    SELECT 'block', 'permanent',
           format('The last failure was permanent (%s): retrying unchanged will fail again.',
                  d.last_error)
      FROM d WHERE d.error_class = 'permanent' AND d.job_state = 'failed'
$$;

GRANT SELECT ON redrive_graphile.dead_letter_list, redrive_graphile.dead_letter_detail,
                redrive_graphile.attempt_history, redrive_graphile.failure_group_list,
                redrive_graphile.idempotency_key_list, redrive_graphile.outbox_list,
                redrive_graphile.attempt_timeline
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
REVOKE ALL ON redrive_graphile.job_state, redrive_graphile.dead_letter_state FROM PUBLIC;
REVOKE ALL ON FUNCTION redrive_graphile.retry_verdict(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_graphile.retry_verdict(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- The read contract's additions of Redrive's migration 18
-- (docs/architecture.md#reads-at-scale). The queue's tables carry no rollups of Redrive's, so
-- both views are computed from the adapter's own views when they are read; they keep the
-- contract's columns so that the console's statements read every source alike.

-- The queues and kinds the filter bar offers.
CREATE VIEW redrive_graphile.dead_letter_facet_list AS
SELECT 'queue'::text AS facet, q.queue AS value
  FROM (SELECT DISTINCT d.queue FROM redrive_graphile.dead_letter_list d) q
UNION ALL
SELECT 'kind', k.kind FROM (SELECT DISTINCT d.kind FROM redrive_graphile.dead_letter_list d) k;

-- Overview time buckets (the adapter's version of migration 18's rollup), with the same rule.
CREATE OR REPLACE VIEW redrive_graphile.bucket_rollup_list AS
SELECT x.series, g.grain_s,
       date_bin(g.grain_s * interval '1 second', x.at, timestamptz '1970-01-01 00:00:00+00')
           AS bucket,
       x.key, count(*) AS n
  FROM (SELECT 'attempt'::text AS series, a.started_at AS at, a.outcome AS key
          FROM redrive_graphile.attempt_timeline a
        UNION ALL
        SELECT 'dead', d.dead_at, coalesce(d.error_class, '') FROM redrive_graphile.dead_letter_list d
        UNION ALL
        SELECT 'resolved', d.resolved_at, '' FROM redrive_graphile.dead_letter_list d
         WHERE d.resolved_at IS NOT NULL) x
 CROSS JOIN (VALUES (60), (3600)) g (grain_s)
 WHERE isfinite(x.at) AND x.at < timestamptz '294000-01-01 00:00:00+00'
 GROUP BY 1, 2, 3, 4;

GRANT SELECT ON redrive_graphile.dead_letter_facet_list, redrive_graphile.bucket_rollup_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- Locks graphile-worker's rows of these jobs, in id order.
CREATE OR REPLACE FUNCTION redrive_graphile.queue_lock_jobs(p_job_ids bigint[])
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (docs/security.md, "The queue's own role").
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (docs/security.md, "The queue's own role").
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    PERFORM 1 FROM graphile_worker._private_jobs j WHERE j.id = ANY (p_job_ids)
     ORDER BY j.id FOR UPDATE;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth
    -- (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
                  ]::pg_catalog.oid[])
                  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                  AND t.oid OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid
                  AND NOT (t.typnamespace OPERATOR(pg_catalog.=) c.relnamespace
                           AND (t.typtype OPERATOR(pg_catalog.=) 'e'
                                OR (e.typtype OPERATOR(pg_catalog.=) 'e'
                                    AND e.typnamespace OPERATOR(pg_catalog.=) c.relnamespace))))
    THEN
        RAISE EXCEPTION 'a column of the queue''s tables has a type that is neither built in nor '
                        'an enum of the queue''s schema: Redrive''s functions would convert its '
                        'values through casts its owner makes'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (docs/security.md, "The queue's own role").
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF pg_catalog.pg_trigger_depth() OPERATOR(pg_catalog.=) 0 THEN
        SELECT t.tgname INTO v_trigger FROM pg_catalog.pg_trigger t
         WHERE t.tgdeferrable
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint c
                            WHERE c.oid OPERATOR(pg_catalog.=) t.tgconstraint
                              AND c.contype OPERATOR(pg_catalog.=) 'f')
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'deferrable trigger % exists in this database: the queue''s jobs are '
                            'not read or changed while something could run at the operator''s '
                            'COMMIT', pg_catalog.quote_ident(v_trigger)
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_cursors c WHERE c.is_holdable)
           OR coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                   EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                   ORDER BY c.name)
                                     FROM pg_catalog.pg_cursors c), '')
              OPERATOR(pg_catalog.<>) coalesce(v_cursors, '') THEN
            RAISE EXCEPTION 'a cursor was declared or replaced while the queue''s jobs were read '
                            'or changed: it would run at the operator''s COMMIT or next FETCH'
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
END
$$;

-- A requeue of one job (for change_jobs): graphile-worker's reschedule_jobs, run now,
-- with these attempts and max_attempts (NULL: unchanged); p_payload (not NULL) replaces the
-- job's payload first (edit and requeue).
CREATE OR REPLACE FUNCTION redrive_graphile.queue_reschedule_job(p_job_id bigint, p_payload json,
                                                                 p_attempts integer,
                                                                 p_max_attempts integer)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (docs/security.md, "The queue's own role").
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (docs/security.md, "The queue's own role").
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    IF p_payload IS NOT NULL THEN
        UPDATE graphile_worker._private_jobs SET payload = p_payload WHERE id = p_job_id;
    END IF;
    PERFORM graphile_worker.reschedule_jobs(ARRAY[p_job_id], run_at => now(),
                                            attempts => p_attempts,
                                            max_attempts => p_max_attempts);
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth
    -- (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
                  ]::pg_catalog.oid[])
                  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                  AND t.oid OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid
                  AND NOT (t.typnamespace OPERATOR(pg_catalog.=) c.relnamespace
                           AND (t.typtype OPERATOR(pg_catalog.=) 'e'
                                OR (e.typtype OPERATOR(pg_catalog.=) 'e'
                                    AND e.typnamespace OPERATOR(pg_catalog.=) c.relnamespace))))
    THEN
        RAISE EXCEPTION 'a column of the queue''s tables has a type that is neither built in nor '
                        'an enum of the queue''s schema: Redrive''s functions would convert its '
                        'values through casts its owner makes'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (docs/security.md, "The queue's own role").
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF pg_catalog.pg_trigger_depth() OPERATOR(pg_catalog.=) 0 THEN
        SELECT t.tgname INTO v_trigger FROM pg_catalog.pg_trigger t
         WHERE t.tgdeferrable
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint c
                            WHERE c.oid OPERATOR(pg_catalog.=) t.tgconstraint
                              AND c.contype OPERATOR(pg_catalog.=) 'f')
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'deferrable trigger % exists in this database: the queue''s jobs are '
                            'not read or changed while something could run at the operator''s '
                            'COMMIT', pg_catalog.quote_ident(v_trigger)
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_cursors c WHERE c.is_holdable)
           OR coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                   EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                   ORDER BY c.name)
                                     FROM pg_catalog.pg_cursors c), '')
              OPERATOR(pg_catalog.<>) coalesce(v_cursors, '') THEN
            RAISE EXCEPTION 'a cursor was declared or replaced while the queue''s jobs were read '
                            'or changed: it would run at the operator''s COMMIT or next FETCH'
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
END
$$;

-- A release of one job its worker p_worker held (for change_jobs; graphile-worker's
-- resetLockedAt): the job's and its named queue's lock cleared, run_at at least now.
CREATE OR REPLACE FUNCTION redrive_graphile.queue_release_job(p_job_id bigint, p_worker text,
                                                              p_job_queue_id integer)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (docs/security.md, "The queue's own role").
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (docs/security.md, "The queue's own role").
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    UPDATE graphile_worker._private_jobs
       SET locked_at = NULL, locked_by = NULL, run_at = greatest(run_at, now())
     WHERE id = p_job_id AND locked_by = p_worker;
    UPDATE graphile_worker._private_job_queues
       SET locked_at = NULL, locked_by = NULL
     WHERE id = p_job_queue_id AND locked_by = p_worker;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth
    -- (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
                  ]::pg_catalog.oid[])
                  AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                  AND t.oid OPERATOR(pg_catalog.>=) 16384::pg_catalog.oid
                  AND NOT (t.typnamespace OPERATOR(pg_catalog.=) c.relnamespace
                           AND (t.typtype OPERATOR(pg_catalog.=) 'e'
                                OR (e.typtype OPERATOR(pg_catalog.=) 'e'
                                    AND e.typnamespace OPERATOR(pg_catalog.=) c.relnamespace))))
    THEN
        RAISE EXCEPTION 'a column of the queue''s tables has a type that is neither built in nor '
                        'an enum of the queue''s schema: Redrive''s functions would convert its '
                        'values through casts its owner makes'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (docs/security.md, "The queue's own role").
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF pg_catalog.pg_trigger_depth() OPERATOR(pg_catalog.=) 0 THEN
        SELECT t.tgname INTO v_trigger FROM pg_catalog.pg_trigger t
         WHERE t.tgdeferrable
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint c
                            WHERE c.oid OPERATOR(pg_catalog.=) t.tgconstraint
                              AND c.contype OPERATOR(pg_catalog.=) 'f')
         LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'deferrable trigger % exists in this database: the queue''s jobs are '
                            'not read or changed while something could run at the operator''s '
                            'COMMIT', pg_catalog.quote_ident(v_trigger)
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_cursors c WHERE c.is_holdable)
           OR coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                   EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                   ORDER BY c.name)
                                     FROM pg_catalog.pg_cursors c), '')
              OPERATOR(pg_catalog.<>) coalesce(v_cursors, '') THEN
            RAISE EXCEPTION 'a cursor was declared or replaced while the queue''s jobs were read '
                            'or changed: it would run at the operator''s COMMIT or next FETCH'
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION redrive_graphile.queue_jobs(), redrive_graphile.queue_tasks(),
                       redrive_graphile.queue_job_queues(),
                       redrive_graphile.queue_lock_jobs(bigint[]),
                       redrive_graphile.queue_reschedule_job(bigint, json, integer, integer),
                       redrive_graphile.queue_release_job(bigint, text, integer)
    FROM PUBLIC;
-- The views call the readers as their reader; the installer's functions (the actions, the
-- capture trigger) call them all.
GRANT EXECUTE ON FUNCTION redrive_graphile.queue_jobs(), redrive_graphile.queue_tasks(),
                          redrive_graphile.queue_job_queues()
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
DO $$
BEGIN
    EXECUTE format('GRANT EXECUTE ON FUNCTION redrive_graphile.queue_jobs(), '
                   'redrive_graphile.queue_tasks(), redrive_graphile.queue_job_queues(), '
                   'redrive_graphile.queue_lock_jobs(bigint[]), '
                   'redrive_graphile.queue_reschedule_job(bigint, json, integer, integer), '
                   'redrive_graphile.queue_release_job(bigint, text, integer) TO %I',
                   current_user);
    -- ALTER ... OWNER TO needs the new owner to have CREATE on the schema: only for as long as
    -- the changes of owner take.
    GRANT CREATE ON SCHEMA redrive_graphile TO redrive_graphile_queue;
    ALTER FUNCTION redrive_graphile.queue_jobs() OWNER TO redrive_graphile_queue;
    ALTER FUNCTION redrive_graphile.queue_tasks() OWNER TO redrive_graphile_queue;
    ALTER FUNCTION redrive_graphile.queue_job_queues() OWNER TO redrive_graphile_queue;
    ALTER FUNCTION redrive_graphile.queue_lock_jobs(bigint[]) OWNER TO redrive_graphile_queue;
    ALTER FUNCTION redrive_graphile.queue_reschedule_job(bigint, json, integer, integer)
        OWNER TO redrive_graphile_queue;
    ALTER FUNCTION redrive_graphile.queue_release_job(bigint, text, integer)
        OWNER TO redrive_graphile_queue;
    REVOKE CREATE ON SCHEMA redrive_graphile FROM redrive_graphile_queue;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The capture triggers (at the top of this file) read the job's values only as
-- the library's own types, and refuse while a cast on a type of the queue's exists
-- (docs/security.md, "The queue's own role").
--
-- graphile-worker's tables use built-in types only, but the queue's application owns them: it can
-- drop a column the capture reads (`ALTER TABLE ... DROP COLUMN max_attempts CASCADE`) and add it
-- back with a type of its own that has an implicit or assignment cast to the built-in one. A
-- capture trigger (installer-owned, SECURITY DEFINER) without these checks converted the column's
-- value through the application's cast (`NEW.attempts < NEW.max_attempts`) and ran its function as
-- the installer. A check of pg_cast alone reads it through the transaction's snapshot: in the
-- application's own REPEATABLE READ transaction a type and cast made by another session after the
-- snapshot are invisible to such a check, while the planner looks casts up in the catalog as it is
-- now. So each capture trigger, before it reads any value of NEW or OLD:
--  - checks the type of every column it reads with pg_typeof(NEW.column), which comes from the
--    row itself, not from a catalog read under the snapshot, against the built-in type
--    graphile-worker gives the column; anything else is refused (SQLSTATE 55000, naming the
--    column and its type);
--  - refuses while a cast exists whose source or target is a type of the job table's schema or
--    of one of its columns (outside pg_catalog), as pg-boss's captures do: in READ COMMITTED it
--    refuses such a cast at once, before the type of the column changes.
-- Values of built-in types are compared with the built-in operators, which no cast of the
-- application's can replace (a cast between two built-in types needs a superuser).

-- Refuses (SQLSTATE 55000) when a column of `p_table` that a capture trigger reads has another
-- type than the one the library gives it. `p_columns`, `p_types` (pg_typeof of the row's value)
-- and `p_expected` are parallel arrays. Called only by the capture triggers.
CREATE FUNCTION redrive_graphile.refuse_retyped_columns(p_table pg_catalog.regclass,
                                                        p_columns text[],
                                                        p_types pg_catalog.regtype[],
                                                        p_expected pg_catalog.regtype[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    FOR i IN 1 .. pg_catalog.array_length(p_columns, 1) LOOP
        IF p_types[i] IS NULL OR p_types[i] OPERATOR(pg_catalog.<>) p_expected[i] THEN
            RAISE EXCEPTION 'column % of % has type %, not %: Redrive''s capture reads the '
                            'queue''s columns only as the library''s own types', p_columns[i],
                            p_table, p_types[i], p_expected[i]
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION redrive_graphile.refuse_retyped_columns(pg_catalog.regclass, text[],
                                                               pg_catalog.regtype[],
                                                               pg_catalog.regtype[]) FROM PUBLIC;

UPDATE redrive.source SET adapter_version = 14 WHERE name = 'graphile-worker';
