-- Redrive source "pgboss", version 1: pg-boss 10.x (schema versions 21-24) as a source of dead
-- letters (issue 7). Applied by `redrive install-source pgboss` into schema redrive_pgboss (the
-- installer created it and its schema_version table) in one transaction; requires Redrive's own
-- schema (migration 6) and pg-boss's schema "pgboss".
--
-- What pg-boss 10 does, read from its source (src/plans.js), which this file builds on:
-- * Jobs live in pgboss.job, partitioned by LIST (name); create_queue() attaches one partition
--   per queue, and row triggers defined here on the parent are cloned onto every partition,
--   including those attached later.
-- * A failure (work() handler threw or timed out, fail(), or maintenance expiring an active job)
--   is failJobs(): DELETE the row and INSERT it again in state 'retry' (retry_count <
--   retry_limit) or 'failed', output = the serialized Error {name, message, stack, ...}. So each
--   failure is an INSERT of a row in state retry or failed: that is what the trigger captures.
-- * failed is terminal: fetch only takes state < 'active'. A job can also land in 'failed' with
--   retries left (when its retry row conflicts with a stately/singleton unique index), so
--   "failed for good" is state = 'failed', not "retry_count >= retry_limit".
-- * retry(name, ids) (retryJobs) is: state = 'retry', retry_limit = retry_limit + 1 where
--   state = 'failed'. The next fetch raises retry_count by one: exactly one more attempt.
-- * A success is completeJobs(): UPDATE state 'active' -> 'completed'.
-- * Failed jobs move to pgboss.archive after archiveFailedAfterSeconds (default: the completed
--   interval, 12 hours), where retry() no longer reaches them; this source lists pgboss.job.

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

CREATE FUNCTION redrive_pgboss.error_class(o jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN redrive.classify_source_error(redrive_pgboss.error_message(o), redrive_pgboss.error_code(o),
                                     coalesce(o ->> 'errorClass', o -> 'value' ->> 'errorClass'));

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

-- ---------------------------------------------------------------------------------------------
-- The read contract (migration 4), over pg-boss's table. A dead letter is a job in state
-- 'failed'; "resolved" is Redrive's own state, kept in redrive.source_job.
CREATE VIEW redrive_pgboss.job_state AS
SELECT s.id, j.id::text AS job_ref, j.name AS queue, j.name AS kind,
       CASE WHEN j.state = 'failed' AND s.resolved_at IS NOT NULL THEN 'resolved'
            WHEN j.state = 'failed' THEN 'open'
            WHEN j.state = 'completed' THEN 'resolved'
            ELSE 'requeued' END AS status,
       CASE WHEN redrive_pgboss.error_message(j.output) = 'job failed by timeout in active state'
            THEN 'deadline'
            WHEN j.retry_count >= j.retry_limit THEN 'exhausted'
            ELSE 'permanent' END AS reason,
       redrive_pgboss.error_class(j.output) AS error_class,
       redrive_pgboss.error_code(j.output) AS error_code,
       redrive_pgboss.error_message(j.output) AS last_error,
       j.output ->> 'stack' AS stack_trace,
       j.retry_count + CASE WHEN j.started_on IS NULL THEN 0 ELSE 1 END AS attempts,
       j.singleton_key AS idempotency_key,
       coalesce(j.completed_on, s.last_failed_at, j.created_on) AS dead_at,
       s.version, s.claimed_by, s.claimed_at,
       CASE WHEN j.state = 'completed' THEN 'succeeded_after_requeue'
            ELSE s.resolution END AS resolution,
       s.resolution_note, s.resolved_by,
       CASE WHEN j.state = 'completed' THEN j.completed_on ELSE s.resolved_at END AS resolved_at,
       s.updated_at, j.state::text AS job_state, j
  FROM redrive.source_job s
  JOIN pgboss.job j ON j.id = s.job_ref::uuid AND j.name = s.queue
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
                          'expire_in', (d.j).expire_in::text, 'keep_until', (d.j).keep_until,
                          'singleton_key', (d.j).singleton_key,
                          'dead_letter_queue', (d.j).dead_letter, 'output', (d.j).output)
           AS headers,
       NULL::text AS entity_id, NULL::bigint AS event_seq, NULL::timestamptz AS event_at,
       d.job_state, d.attempts AS job_attempt, (d.j).retry_limit + 1 AS max_attempts,
       NULL::text AS locked_by,
       CASE WHEN d.job_state = 'active' THEN (d.j).started_on + (d.j).expire_in END
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
      FROM d WHERE d.job_state <> 'failed'
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

-- ---------------------------------------------------------------------------------------------
-- Actions (migration 5's signatures). Each: role, reason, action id, lock the targets (Redrive's
-- row, then pg-boss's job, in id order), classify each target against the version the operator
-- saw, apply, audit, all in the caller's transaction.

-- The targets with their current state, locked. Not granted: only the actions call it.
CREATE FUNCTION redrive_pgboss.lock_targets(p_targets jsonb)
RETURNS TABLE (id bigint, seen_version integer, version integer, job_ref text, queue text,
               status text, job_state text, retry_count integer, retry_limit integer,
               data jsonb)
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
    SELECT t.id, t.version, d.version, d.job_ref, d.queue, d.status, d.job_state,
           (d.j).retry_count, (d.j).retry_limit, (d.j).data
      FROM (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                   (e ->> 'version')::integer AS version
              FROM jsonb_array_elements(p_targets) e) t
      LEFT JOIN redrive_pgboss.job_state d ON d.id = t.id
     ORDER BY t.id;
END
$$;
REVOKE ALL ON FUNCTION redrive_pgboss.lock_targets(jsonb) FROM PUBLIC;

-- Requeue (roles: oncall) exactly as pg-boss's retry() does: state 'retry' and one more attempt
-- (retry_limit + 1), earlier attempts kept. With p_reset_attempts the job also gets its whole
-- retry budget again (retry_count 0, started_on NULL, retry_limit as it was).
CREATE FUNCTION redrive_pgboss.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
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
    v_applied bigint[];
    v_targets jsonb;
    v_before jsonb;
    v_results jsonb;
    v_conflicts integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, 'requeue', p_os_user, p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    WITH c AS (SELECT t.*, CASE WHEN t.version IS NULL THEN 'not_found'
                                WHEN t.version <> t.seen_version OR t.status <> 'open'
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_pgboss.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version, 'source', 'pgboss',
                                                 'job_ref', c.job_ref) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'status', c.status,
                                                 'job_state', c.job_state,
                                                 'retry_count', c.retry_count,
                                                 'retry_limit', c.retry_limit) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object(
                        'id', c.id, 'result', c.result,
                        'detail', CASE WHEN c.result = 'conflict'
                                       THEN format('now %s (pg-boss state %s) at version %s '
                                                   '(you saw version %s)', c.status,
                                                   c.job_state, c.version, c.seen_version) END)
                        ORDER BY c.id) FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_applied, v_targets, v_before, v_results, v_conflicts
      FROM c;

    -- pg-boss 10 retryJobs (src/plans.js), for the applied targets.
    UPDATE pgboss.job j
       SET state = 'retry',
           retry_limit = CASE WHEN p_reset_attempts THEN j.retry_limit ELSE j.retry_limit + 1 END,
           retry_count = CASE WHEN p_reset_attempts THEN 0 ELSE j.retry_count END,
           started_on = CASE WHEN p_reset_attempts THEN NULL ELSE j.started_on END
      FROM redrive.source_job s
     WHERE s.id IN (SELECT unnest(v_applied)) AND s.source = 'pgboss'
       AND j.name = s.queue AND j.id = s.job_ref::uuid AND j.state = 'failed';
    UPDATE redrive.source_job
       SET version = version + 1, requeued_by = session_user, requeued_at = clock_timestamp(),
           succeeded_at = NULL, updated_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));

    RETURN redrive.finish_action(
        p_action_id, 'requeue', v_targets, p_reason, p_ticket, p_os_user, v_before,
        jsonb_build_object('status', 'requeued', 'reset_attempts', p_reset_attempts,
                           'source', 'pgboss', 'via', 'pg-boss retry(): state retry'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

-- Edit the job's data and requeue it as above (roles: oncall); the audit entry keeps both.
CREATE FUNCTION redrive_pgboss.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
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
    SELECT * INTO d FROM redrive_pgboss.lock_targets(
        jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)));
    IF d.version IS NULL OR d.version <> p_version OR d.status <> 'open' THEN
        RETURN redrive.finish_action(
            p_action_id, 'edit_and_requeue', '[]', p_reason, p_ticket, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', p_dead_letter, 'result', 'conflict'))));
    END IF;
    UPDATE pgboss.job j
       SET data = p_payload, state = 'retry',
           retry_limit = CASE WHEN p_reset_attempts THEN j.retry_limit ELSE j.retry_limit + 1 END,
           retry_count = CASE WHEN p_reset_attempts THEN 0 ELSE j.retry_count END,
           started_on = CASE WHEN p_reset_attempts THEN NULL ELSE j.started_on END
     WHERE j.name = d.queue AND j.id = d.job_ref::uuid AND j.state = 'failed';
    UPDATE redrive.source_job
       SET version = version + 1, requeued_by = session_user, requeued_at = clock_timestamp(),
           succeeded_at = NULL, updated_at = clock_timestamp()
     WHERE id = d.id;
    RETURN redrive.finish_action(
        p_action_id, 'edit_and_requeue',
        jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', d.id,
                                             'version', d.version, 'source', 'pgboss',
                                             'job_ref', d.job_ref)),
        p_reason, p_ticket, p_os_user, jsonb_build_object('payload', d.data),
        jsonb_build_object('payload', p_payload),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', d.id, 'result', 'applied'))));
END
$$;

-- Mark resolved (roles: oncall, support). pg-boss has no such state: the resolution is kept in
-- redrive.source_job, keyed by the job's id, and the job stays failed in pg-boss.
CREATE FUNCTION redrive_pgboss.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
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
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_pgboss.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version, 'source', 'pgboss',
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
                           'source', 'pgboss'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

-- Claim or release the claim (roles: oncall, support), on Redrive's row of the job.
CREATE FUNCTION redrive_pgboss.claim_dead_letters(p_action_id uuid, p_targets jsonb,
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
                 FROM redrive_pgboss.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version, 'source', 'pgboss',
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

-- pg-boss itself fails active jobs whose expire_in passed (maintenance, failJobsByTimeout), so
-- there is nothing to release here.
CREATE FUNCTION redrive_pgboss.release_stuck_jobs(p_action_id uuid, p_targets jsonb,
                                                  p_reason text, p_ticket text DEFAULT NULL,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    RAISE EXCEPTION 'pg-boss jobs are never stuck: pg-boss fails an active job once its '
                    'expire_in has passed' USING ERRCODE = 'feature_not_supported';
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
                          redrive_pgboss.error_class(jsonb)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
