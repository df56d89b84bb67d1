-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "graphile-worker", version 7: code the queue's application role can plant never
-- runs with Redrive's rights or an operator's (docs/security.md, "The queue's own role"); the
-- same change as version 9 of the pg-boss 10 adapter (pgboss/0009_confined_queue_role.sql), which
-- says why. graphile-worker's admin function reschedule_jobs is the application's too: a
-- replaced one runs as the caller, now the confined role.
--
-- Every read and every change of graphile-worker's tables, and every call of its functions,
-- happens inside a SECURITY DEFINER function owned by redrive_graphile_queue (NOLOGIN, a member
-- of nothing, no USAGE on Redrive's schemas, SELECT and UPDATE on _private_jobs and
-- _private_job_queues, SELECT on _private_tasks): the views, the actions and the capture trigger
-- (it read the task and queue names as the installer, on the worker's own UPDATE).
-- graphile-worker enables row level security on its tables with no policy, so the queue's owner
-- gives redrive_graphile_queue a policy on each (install-source prints the commands).

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
CREATE FUNCTION redrive_graphile.queue_jobs()
RETURNS SETOF graphile_worker._private_jobs
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT j FROM graphile_worker._private_jobs j
$$;

CREATE FUNCTION redrive_graphile.queue_tasks()
RETURNS TABLE (id integer, identifier text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t.id, t.identifier FROM graphile_worker._private_tasks t
$$;

CREATE FUNCTION redrive_graphile.queue_job_queues()
RETURNS TABLE (id integer, queue_name text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT q.id, q.queue_name FROM graphile_worker._private_job_queues q
$$;

-- Locks graphile-worker's rows of these jobs, in id order.
CREATE FUNCTION redrive_graphile.queue_lock_jobs(p_job_ids bigint[])
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM 1 FROM graphile_worker._private_jobs j WHERE j.id = ANY (p_job_ids)
     ORDER BY j.id FOR UPDATE;
END
$$;

-- A requeue of one job (version 3's change_jobs): graphile-worker's reschedule_jobs, run now,
-- with these attempts and max_attempts (NULL: unchanged); p_payload (not NULL) replaces the
-- job's payload first (edit and requeue).
CREATE FUNCTION redrive_graphile.queue_reschedule_job(p_job_id bigint, p_payload json,
                                                      p_attempts integer, p_max_attempts integer)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_payload IS NOT NULL THEN
        UPDATE graphile_worker._private_jobs SET payload = p_payload WHERE id = p_job_id;
    END IF;
    PERFORM graphile_worker.reschedule_jobs(ARRAY[p_job_id], run_at => now(),
                                            attempts => p_attempts,
                                            max_attempts => p_max_attempts);
END
$$;

-- A release of one job its worker p_worker held (version 3's change_jobs, graphile-worker's
-- resetLockedAt): the job's and its named queue's lock cleared, run_at at least now.
CREATE FUNCTION redrive_graphile.queue_release_job(p_job_id bigint, p_worker text,
                                                   p_job_queue_id integer)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE graphile_worker._private_jobs
       SET locked_at = NULL, locked_by = NULL, run_at = greatest(run_at, now())
     WHERE id = p_job_id AND locked_by = p_worker;
    UPDATE graphile_worker._private_job_queues
       SET locked_at = NULL, locked_by = NULL
     WHERE id = p_job_queue_id AND locked_by = p_worker;
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
-- The reads: version 4's view, graphile-worker's rows from the confined functions.
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

-- ---------------------------------------------------------------------------------------------
-- Capture: version 4's trigger, with the task's and the named queue's names read confined.
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
            CASE WHEN NEW.attempts < NEW.max_attempts
                 THEN greatest(0, (extract(epoch FROM (NEW.run_at - v_now)) * 1000)::bigint) END);
    RETURN NULL;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The actions: Redrive's rows locked and changed as before (by the installer's functions,
-- through the skeleton); graphile-worker's rows only through the confined functions.
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

UPDATE redrive.source SET adapter_version = 7 WHERE name = 'graphile-worker';
