-- Redrive source "graphile-worker", version 1: graphile-worker 0.17.x (its migrations 16-19) as
-- a source of dead letters (issue 7). Applied by `redrive install-source graphile-worker` into
-- schema redrive_graphile in one transaction; requires Redrive's own schema (migration 6) and
-- graphile-worker's schema "graphile_worker".
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
CREATE FUNCTION redrive_graphile.capture_failure() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
    v_queue text;
    v_kind text;
BEGIN
    -- force_unlock_workers and the 4-hour stale-lock reset unlock too, without a failure.
    IF NOT (NEW.run_at > greatest(now(), OLD.run_at)) THEN
        RETURN NULL;
    END IF;
    SELECT t.identifier INTO v_kind FROM graphile_worker._private_tasks t WHERE t.id = NEW.task_id;
    SELECT q.queue_name INTO v_queue
      FROM graphile_worker._private_job_queues q WHERE q.id = NEW.job_queue_id;
    INSERT INTO redrive.source_job AS s (id, source, job_ref, queue, kind, failures,
                                         first_failed_at, last_failed_at)
    VALUES (redrive_graphile.dead_letter_id(NEW.id), 'graphile-worker', NEW.id::text,
            coalesce(v_queue, '(none)'), coalesce(v_kind, '?'), 1, v_now, v_now)
    ON CONFLICT (id) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now
    RETURNING s.id INTO v_id;
    INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                        outcome, error_class, error_code, message, stack_trace,
                                        worker_id, backoff_ms)
    VALUES (v_id, NEW.attempts, least(OLD.locked_at, v_now), v_now, 'failed',
            redrive.classify_source_error(NEW.last_error, NULL, NULL), NULL, NEW.last_error,
            NULL, OLD.locked_by,
            CASE WHEN NEW.attempts < NEW.max_attempts
                 THEN greatest(0, (extract(epoch FROM (NEW.run_at - v_now)) * 1000)::bigint) END);
    RETURN NULL;
END
$$;

CREATE FUNCTION redrive_graphile.capture_success() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
BEGIN
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

-- ---------------------------------------------------------------------------------------------
-- The read contract (migration 4). A dead letter is a job graphile-worker failed for good, or a
-- job locked longer than adapter_settings.stuck_after (reason 'stuck', error class ambiguous: its
-- worker may have done the work before it died). "resolved" is Redrive's own state.
CREATE VIEW redrive_graphile.job_state AS
SELECT redrive_graphile.dead_letter_id(j.id) AS id, j.id::text AS job_ref,
       coalesce(q.queue_name, '(none)') AS queue, t.identifier AS kind,
       (j.locked_at IS NOT NULL AND j.locked_at < now() - cfg.stuck_after) AS stuck,
       (j.locked_at IS NULL AND j.attempts >= j.max_attempts) AS failed,
       CASE WHEN j.locked_at IS NOT NULL AND j.locked_at < now() - cfg.stuck_after THEN 'stuck'
            WHEN j.locked_at IS NOT NULL THEN 'locked'
            WHEN j.attempts >= j.max_attempts THEN 'failed'
            ELSE 'waiting' END AS job_state,
       j.locked_at + cfg.stuck_after AS stuck_at, j.attempts::integer AS attempts,
       j.max_attempts::integer AS max_attempts, j.last_error, j.key, j.locked_at, j.locked_by,
       j.run_at, j.created_at, j.payload, j.priority, j.revision, j.flags, j.job_queue_id,
       j.id AS job_id, s.version AS row_version, s.last_failed_at, s.claimed_by, s.claimed_at,
       s.resolution, s.resolution_note, s.resolved_by, s.resolved_at, s.updated_at
  FROM graphile_worker._private_jobs j
  JOIN graphile_worker._private_tasks t ON t.id = j.task_id
  LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
  LEFT JOIN redrive.source_job s ON s.id = redrive_graphile.dead_letter_id(j.id)
  CROSS JOIN redrive_graphile.adapter_settings cfg;

CREATE VIEW redrive_graphile.dead_letter_state AS
SELECT d.*,
       CASE WHEN d.stuck THEN 'open'
            WHEN NOT d.failed THEN 'requeued'
            WHEN d.resolved_at IS NOT NULL THEN 'resolved' ELSE 'open' END AS status,
       CASE WHEN d.stuck THEN 'stuck'
            WHEN d.last_error = 'Manually marked as failed' THEN 'permanent'
            ELSE 'exhausted' END AS reason,
       CASE WHEN d.stuck THEN 'ambiguous'
            ELSE redrive.classify_source_error(d.last_error, NULL, NULL) END AS error_class,
       CASE WHEN d.stuck THEN 'worker_lost' END AS error_code,
       CASE WHEN d.stuck
            THEN format('locked by worker %s since %s without a result: the worker is presumed '
                        'dead (graphile-worker keeps the lock for 4 hours)', d.locked_by,
                        d.locked_at)
            ELSE d.last_error END AS message,
       CASE WHEN d.stuck THEN d.stuck_at
            ELSE coalesce(d.last_failed_at,
                          d.run_at - exp(least(d.attempts, 10)) * interval '1 second') END
           AS dead_at,
       coalesce(d.row_version, 1) AS version
  FROM redrive_graphile.job_state d;

CREATE VIEW redrive_graphile.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.message AS last_error, d.attempts, d.key AS idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.message) AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, coalesce(d.updated_at, d.dead_at) AS updated_at,
       'graphile-worker'::text AS source
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

CREATE VIEW redrive_graphile.attempt_history AS
SELECT a.source_job_id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       (extract(epoch FROM (a.finished_at - a.started_at)) * 1000)::bigint AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'graphile-worker';

CREATE VIEW redrive_graphile.failure_group_list AS
SELECT d.fingerprint, min(d.kind) AS kind, min(d.error_class) AS error_class,
       min(d.error_code) AS error_code, min(d.last_error) AS sample_message,
       min(d.dead_at) AS first_seen
  FROM redrive_graphile.dead_letter_list d
 GROUP BY d.fingerprint;

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

-- ---------------------------------------------------------------------------------------------
-- Actions (migration 5's signatures; release_stuck_jobs from migration 6).

-- The targets with their current state, locked (Redrive's rows, then the jobs, in id order),
-- with Redrive's row created for a job that has none yet (a stuck job that never failed). Not
-- granted: only the actions call it.
CREATE FUNCTION redrive_graphile.lock_targets(p_targets jsonb)
RETURNS TABLE (id bigint, seen_version integer, version integer, job_ref text, job_id bigint,
               status text, job_state text, attempts integer, max_attempts integer,
               locked_by text, locked_at timestamptz, payload json, job_queue_id integer)
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
    PERFORM 1 FROM graphile_worker._private_jobs j
     WHERE redrive_graphile.dead_letter_id(j.id)
           IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY j.id FOR UPDATE;
    RETURN QUERY
    SELECT t.id, t.version, d.version, d.job_ref, d.job_id, d.status, d.job_state, d.attempts,
           d.max_attempts, d.locked_by, d.locked_at, d.payload, d.job_queue_id
      FROM (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                   (e ->> 'version')::integer AS version
              FROM jsonb_array_elements(p_targets) e) t
      LEFT JOIN redrive_graphile.dead_letter_state d ON d.id = t.id
     ORDER BY t.id;
END
$$;
REVOKE ALL ON FUNCTION redrive_graphile.lock_targets(jsonb) FROM PUBLIC;

-- Requeue (roles: oncall) through graphile-worker's own reschedule_jobs: run now, with one more
-- attempt (max_attempts = attempts + 1) or, with p_reset_attempts, attempts back to 0. A stuck
-- job is refused: it needs release_stuck_jobs first (DESIGN §3 rule 4).
CREATE FUNCTION redrive_graphile.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
                                                      p_reset_attempts boolean, p_reason text,
                                                      p_ticket text DEFAULT NULL,
                                                      p_os_user text DEFAULT NULL,
                                                      p_bulk_id uuid DEFAULT NULL,
                                                      p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    c record;
    v_targets jsonb := '[]';
    v_before jsonb := '[]';
    v_results jsonb := '[]';
    v_conflicts integer := 0;
    v_refused integer := 0;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, 'requeue', p_os_user, p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    FOR c IN SELECT * FROM redrive_graphile.lock_targets(p_targets) LOOP
        IF c.version IS NULL THEN
            v_results := v_results || jsonb_build_object('id', c.id, 'result', 'not_found');
            v_conflicts := v_conflicts + 1;
        ELSIF c.version <> c.seen_version OR c.status <> 'open' THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'conflict',
                'detail', format('now %s (%s) at version %s (you saw version %s)', c.status,
                                 c.job_state, c.version, c.seen_version));
            v_conflicts := v_conflicts + 1;
        ELSIF c.job_state <> 'failed' THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'refused',
                'detail', format('worker %s holds the job since %s: release it first',
                                 c.locked_by, c.locked_at));
            v_refused := v_refused + 1;
        ELSE
            -- graphile-worker's documented admin function, once per job (max_attempts differs).
            PERFORM graphile_worker.reschedule_jobs(
                ARRAY[c.job_id], run_at => now(),
                attempts => CASE WHEN p_reset_attempts THEN 0 END,
                max_attempts => CASE WHEN p_reset_attempts THEN NULL
                                     ELSE greatest(c.max_attempts, c.attempts + 1) END);
            UPDATE redrive.source_job
               SET version = version + 1, requeued_by = session_user,
                   requeued_at = clock_timestamp(), succeeded_at = NULL,
                   updated_at = clock_timestamp()
             WHERE id = c.id;
            v_targets := v_targets || jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                         'version', c.seen_version,
                                                         'source', 'graphile-worker',
                                                         'job_ref', c.job_ref);
            v_before := v_before || jsonb_build_object('id', c.id, 'status', c.status,
                                                       'attempts', c.attempts,
                                                       'max_attempts', c.max_attempts);
        END IF;
    END LOOP;

    RETURN redrive.finish_action(
        p_action_id, 'requeue', v_targets, p_reason, p_ticket, p_os_user, v_before,
        jsonb_build_object('status', 'requeued', 'reset_attempts', p_reset_attempts,
                           'source', 'graphile-worker',
                           'via', 'graphile_worker.reschedule_jobs'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', v_refused, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

-- Edit the payload and requeue (roles: oncall); the audit entry keeps both.
CREATE FUNCTION redrive_graphile.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
                                                  p_version integer, p_payload jsonb,
                                                  p_reset_attempts boolean, p_reason text,
                                                  p_ticket text DEFAULT NULL,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    d record;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    IF p_payload IS NULL OR jsonb_typeof(p_payload) NOT IN ('object', 'array') THEN
        RAISE EXCEPTION 'the edited payload must be a JSON object or array'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.claim_action_id(p_action_id, 'edit_and_requeue', p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO d FROM redrive_graphile.lock_targets(
        jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)));
    IF d.version IS NULL OR d.version <> p_version OR d.status <> 'open'
       OR d.job_state <> 'failed' THEN
        RETURN redrive.finish_action(
            p_action_id, 'edit_and_requeue', '[]', p_reason, p_ticket, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', p_dead_letter, 'result', 'conflict'))));
    END IF;
    UPDATE graphile_worker._private_jobs SET payload = p_payload::json WHERE id = d.job_id;
    PERFORM graphile_worker.reschedule_jobs(
        ARRAY[d.job_id], run_at => now(),
        attempts => CASE WHEN p_reset_attempts THEN 0 END,
        max_attempts => CASE WHEN p_reset_attempts THEN NULL
                             ELSE greatest(d.max_attempts, d.attempts + 1) END);
    UPDATE redrive.source_job
       SET version = version + 1, requeued_by = session_user, requeued_at = clock_timestamp(),
           succeeded_at = NULL, updated_at = clock_timestamp()
     WHERE id = d.id;
    RETURN redrive.finish_action(
        p_action_id, 'edit_and_requeue',
        jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', d.id,
                                             'version', d.version, 'source', 'graphile-worker',
                                             'job_ref', d.job_ref)),
        p_reason, p_ticket, p_os_user, jsonb_build_object('payload', d.payload),
        jsonb_build_object('payload', p_payload),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', d.id, 'result', 'applied'))));
END
$$;

-- Mark resolved (roles: oncall, support): kept in redrive.source_job, keyed by the job's id;
-- the job stays failed in graphile-worker.
CREATE FUNCTION redrive_graphile.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
                                                      p_resolution text, p_note text,
                                                      p_reason text, p_ticket text DEFAULT NULL,
                                                      p_os_user text DEFAULT NULL,
                                                      p_bulk_id uuid DEFAULT NULL,
                                                      p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_applied bigint[];
    v_targets jsonb;
    v_results jsonb;
    v_conflicts integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    IF p_resolution IS NULL OR p_resolution NOT IN ('fixed_by_hand', 'duplicate', 'not_needed') THEN
        RAISE EXCEPTION 'resolution must be fixed_by_hand, duplicate or not_needed'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.claim_action_id(p_action_id, 'resolve', p_os_user, p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    WITH c AS (SELECT t.*, CASE WHEN t.version IS NULL THEN 'not_found'
                                WHEN t.version <> t.seen_version OR t.status <> 'open'
                                     OR t.job_state <> 'failed'
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_graphile.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version,
                                                 'source', 'graphile-worker',
                                                 'job_ref', c.job_ref) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'result', c.result) ORDER BY c.id)
                        FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_applied, v_targets, v_results, v_conflicts
      FROM c;
    UPDATE redrive.source_job
       SET resolution = p_resolution, resolution_note = p_note, resolved_by = session_user,
           resolved_at = clock_timestamp(), version = version + 1, updated_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));
    RETURN redrive.finish_action(
        p_action_id, 'resolve', v_targets, p_reason, p_ticket, p_os_user, NULL,
        jsonb_build_object('status', 'resolved', 'resolution', p_resolution, 'note', p_note,
                           'source', 'graphile-worker'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

-- Claim or release the claim (roles: oncall, support).
CREATE FUNCTION redrive_graphile.claim_dead_letters(p_action_id uuid, p_targets jsonb,
                                                    p_release boolean, p_reason text,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_action text := CASE WHEN p_release THEN 'unclaim' ELSE 'claim' END;
    v_applied bigint[];
    v_targets jsonb;
    v_results jsonb;
    v_conflicts integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, v_action, p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    WITH c AS (SELECT t.*, CASE WHEN t.version IS NULL OR t.version <> t.seen_version
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_graphile.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version,
                                                 'source', 'graphile-worker',
                                                 'job_ref', c.job_ref) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'result', c.result) ORDER BY c.id)
                        FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_applied, v_targets, v_results, v_conflicts
      FROM c;
    UPDATE redrive.source_job
       SET claimed_by = CASE WHEN p_release THEN NULL ELSE session_user END,
           claimed_at = CASE WHEN p_release THEN NULL ELSE clock_timestamp() END,
           version = version + 1, updated_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));
    RETURN redrive.finish_action(
        p_action_id, v_action, v_targets, p_reason, NULL, p_os_user, NULL,
        jsonb_build_object('claimed_by', CASE WHEN p_release THEN NULL ELSE session_user END),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'results', v_results));
END
$$;

-- Release stuck jobs (roles: oncall, support): for each confirmed job still locked by the
-- worker the operator saw, and locked longer than adapter_settings.stuck_after, do what
-- graphile-worker does to a lock older than 4 hours (resetLockedAt: locked_at and locked_by
-- cleared, run_at at least now, the job's named queue unlocked if that worker held it), and
-- record the lost attempt as abandoned. The job then runs again if it has attempts left, or is
-- failed for good. A job locked more recently is refused: its worker may be alive.
CREATE FUNCTION redrive_graphile.release_stuck_jobs(p_action_id uuid, p_targets jsonb,
                                                    p_reason text, p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    c record;
    v_targets jsonb := '[]';
    v_before jsonb := '[]';
    v_results jsonb := '[]';
    v_conflicts integer := 0;
    v_refused integer := 0;
    v_now timestamptz := clock_timestamp();
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, 'release_stuck', p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    FOR c IN SELECT * FROM redrive_graphile.lock_targets(p_targets) LOOP
        IF c.version IS NULL THEN
            v_results := v_results || jsonb_build_object('id', c.id, 'result', 'not_found');
            v_conflicts := v_conflicts + 1;
        ELSIF c.version <> c.seen_version OR c.job_state NOT IN ('stuck', 'locked') THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'conflict',
                'detail', format('now %s at version %s (you saw version %s)', c.job_state,
                                 c.version, c.seen_version));
            v_conflicts := v_conflicts + 1;
        ELSIF c.job_state = 'locked' THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'refused',
                'detail', format('worker %s took the job at %s, less than %s ago: it may be '
                                 'alive', c.locked_by, c.locked_at,
                                 (SELECT stuck_after FROM redrive_graphile.adapter_settings)));
            v_refused := v_refused + 1;
        ELSE
            INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at,
                                                finished_at, outcome, error_class, error_code,
                                                message, worker_id)
            VALUES (c.id, c.attempts, least(c.locked_at, v_now), v_now, 'abandoned',
                    'ambiguous', 'worker_lost',
                    format('worker %s held the job from %s without a result; released by %s: %s',
                           c.locked_by, c.locked_at, session_user, p_reason),
                    c.locked_by);
            -- graphile-worker's resetLockedAt, for this job and its worker only.
            UPDATE graphile_worker._private_jobs
               SET locked_at = NULL, locked_by = NULL, run_at = greatest(run_at, now())
             WHERE id = c.job_id AND locked_by = c.locked_by;
            UPDATE graphile_worker._private_job_queues
               SET locked_at = NULL, locked_by = NULL
             WHERE id = c.job_queue_id AND locked_by = c.locked_by;
            UPDATE redrive.source_job
               SET version = version + 1, updated_at = v_now
             WHERE id = c.id;
            v_targets := v_targets || jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                         'version', c.seen_version,
                                                         'source', 'graphile-worker',
                                                         'job_ref', c.job_ref);
            v_before := v_before || jsonb_build_object('id', c.id, 'locked_by', c.locked_by,
                                                       'locked_at', c.locked_at,
                                                       'attempts', c.attempts,
                                                       'max_attempts', c.max_attempts);
        END IF;
    END LOOP;
    RETURN redrive.finish_action(
        p_action_id, 'release_stuck', v_targets, p_reason, p_ticket, p_os_user, v_before,
        jsonb_build_object('locked_by', NULL, 'source', 'graphile-worker',
                           'via', 'graphile-worker resetLockedAt, for these jobs'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', v_refused, 'results', v_results));
END
$$;

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
GRANT EXECUTE ON FUNCTION redrive_graphile.dead_letter_id(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
