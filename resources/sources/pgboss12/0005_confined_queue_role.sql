-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" for pg-boss 12, version 5: code the queue's application role can plant
-- never runs with Redrive's rights or an operator's (docs/security.md, "The queue's own role");
-- the same change as version 9 of the pg-boss 10 line (pgboss/0009_confined_queue_role.sql),
-- which says why.
--
-- Every read and every change of pgboss.job happens inside a SECURITY DEFINER function owned by
-- redrive_pgboss_queue (NOLOGIN, a member of nothing, no USAGE on Redrive's schemas, SELECT and
-- UPDATE on pgboss.job only): the views, the actions, and the capture trigger that links a job
-- pg-boss's redrive() created to the failure it came from (it ran as the installer, on the
-- application's own INSERT).

DO $$
DECLARE
    v_super boolean := (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user);
    -- The queue's schema by its table (the installer rewrites qualified names for another one).
    v_queue regnamespace := (SELECT c.relnamespace::regnamespace FROM pg_catalog.pg_class c
                              WHERE c.oid = 'pgboss.job'::regclass);
    r record;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'redrive_pgboss_queue') THEN
        BEGIN
            CREATE ROLE redrive_pgboss_queue NOLOGIN NOINHERIT;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN
                NULL; -- another database's install created it meanwhile
            WHEN insufficient_privilege THEN
                RAISE EXCEPTION 'permission denied to create role redrive_pgboss_queue: the role '
                                'that installs a source needs CREATEROLE (ALTER ROLE % CREATEROLE)',
                                current_user USING ERRCODE = 'insufficient_privilege';
        END;
    END IF;
    -- A role of that name made by someone else must be as confined as the one made here.
    SELECT rolsuper, rolcreaterole, rolcreatedb, rolcanlogin, rolbypassrls, rolreplication
      INTO r FROM pg_catalog.pg_roles WHERE rolname = 'redrive_pgboss_queue';
    IF r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolcanlogin OR r.rolbypassrls
       OR r.rolreplication
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m
                   WHERE m.member = 'redrive_pgboss_queue'::regrole) THEN
        RAISE EXCEPTION 'role redrive_pgboss_queue exists with more than the adapter gives it '
                        '(a login, an attribute or a membership): drop it and install again'
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- ALTER ... OWNER TO needs the installer to be a member (of this role, never the reverse).
    IF NOT v_super AND NOT pg_catalog.pg_has_role(current_user, 'redrive_pgboss_queue', 'MEMBER')
    THEN
        EXECUTE format('GRANT redrive_pgboss_queue TO %I', current_user);
    END IF;

    -- What the confined functions need on pg-boss's tables, and nothing else.
    EXECUTE format('GRANT USAGE ON SCHEMA %s TO redrive_pgboss_queue', v_queue);
    GRANT SELECT, UPDATE ON pgboss.job TO redrive_pgboss_queue;
    -- GRANT by a role without the grant option only warns: check what it got.
    IF NOT (pg_catalog.has_schema_privilege('redrive_pgboss_queue', v_queue::oid, 'USAGE')
            AND pg_catalog.has_table_privilege('redrive_pgboss_queue', 'pgboss.job',
                                               'SELECT, UPDATE')) THEN
        RAISE EXCEPTION 'role % cannot pass on its rights on schema % to '
                        'redrive_pgboss_queue (the role the adapter reads and changes pg-boss''s '
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
-- The confined functions (owned by redrive_pgboss_queue, not granted to PUBLIC).

-- The job with this id in this queue as pg-boss holds it (no row once pg-boss deleted it).
CREATE FUNCTION redrive_pgboss.queue_job(p_id uuid, p_name text)
RETURNS SETOF pgboss.job
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT q FROM pgboss.job q WHERE q.id = p_id AND q.name = p_name
$$;

-- The same for many jobs at once (p_ids[i] in queue p_names[i]), in one call: what the list
-- reads, so a page costs one call rather than one per job Redrive has a record of.
CREATE FUNCTION redrive_pgboss.queue_jobs_of(p_ids uuid[], p_names text[])
RETURNS SETOF pgboss.job
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT q FROM unnest(p_ids, p_names) r(id, name)
      JOIN pgboss.job q ON q.id = r.id AND q.name = r.name
$$;

-- Locks pg-boss's rows of these jobs ([{"id": uuid, "name": queue}, ...]) in the order given.
CREATE FUNCTION redrive_pgboss.queue_lock_jobs(p_jobs jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM 1
       FROM jsonb_array_elements(p_jobs) WITH ORDINALITY e(v, n)
       JOIN pgboss.job q ON q.id = (e.v ->> 'id')::uuid AND q.name = e.v ->> 'name'
      ORDER BY e.n
        FOR UPDATE OF q;
END
$$;

-- pg-boss 12's retry() of these failed jobs (dist/plans.js retryJobs; version 1 of this line):
-- state retry, one more attempt or with p_reset the whole budget again, completed_on cleared and
-- start_after no earlier than now; p_payload (not NULL) replaces the job's data (edit and requeue).
CREATE FUNCTION redrive_pgboss.queue_retry_jobs(p_jobs jsonb, p_reset boolean, p_payload jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE pgboss.job q
       SET data = coalesce(p_payload, q.data),
           state = 'retry',
           retry_limit = CASE WHEN p_reset THEN q.retry_limit ELSE q.retry_limit + 1 END,
           retry_count = CASE WHEN p_reset THEN 0 ELSE q.retry_count END,
           started_on = CASE WHEN p_reset THEN NULL ELSE q.started_on END,
           completed_on = NULL,
           start_after = greatest(q.start_after, now())
      FROM jsonb_array_elements(p_jobs) e(v)
     WHERE q.id = (e.v ->> 'id')::uuid AND q.name = e.v ->> 'name' AND q.state = 'failed';
END
$$;

-- The failed jobs of a chain (source_root_id p_root) that a job pg-boss's redrive() created
-- (p_new) may have come from: not a dead-letter copy themselves (source_id NULL), not p_new.
CREATE FUNCTION redrive_pgboss.queue_redrive_candidates(p_root uuid, p_new uuid)
RETURNS TABLE (id uuid, name text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT q.id, q.name FROM pgboss.job q
     WHERE q.state = 'failed' AND q.source_id IS NULL AND q.id <> p_new
       AND (q.id = p_root OR q.source_root_id = p_root)
$$;

REVOKE ALL ON FUNCTION redrive_pgboss.queue_job(uuid, text),
                       redrive_pgboss.queue_jobs_of(uuid[], text[]),
                       redrive_pgboss.queue_lock_jobs(jsonb),
                       redrive_pgboss.queue_retry_jobs(jsonb, boolean, jsonb),
                       redrive_pgboss.queue_redrive_candidates(uuid, uuid)
    FROM PUBLIC;
-- The views call queue_job as their reader; the installer's functions (the actions, the capture
-- trigger) call the others.
GRANT EXECUTE ON FUNCTION redrive_pgboss.queue_job(uuid, text),
                          redrive_pgboss.queue_jobs_of(uuid[], text[])
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
DO $$
BEGIN
    EXECUTE format('GRANT EXECUTE ON FUNCTION redrive_pgboss.queue_job(uuid, text), '
                   'redrive_pgboss.queue_jobs_of(uuid[], text[]), '
                   'redrive_pgboss.queue_lock_jobs(jsonb), '
                   'redrive_pgboss.queue_retry_jobs(jsonb, boolean, jsonb), '
                   'redrive_pgboss.queue_redrive_candidates(uuid, uuid) TO %I', current_user);
    -- ALTER ... OWNER TO needs the new owner to have CREATE on the schema: only for as long as
    -- the changes of owner take.
    GRANT CREATE ON SCHEMA redrive_pgboss TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_job(uuid, text) OWNER TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_jobs_of(uuid[], text[]) OWNER TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_lock_jobs(jsonb) OWNER TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_retry_jobs(jsonb, boolean, jsonb)
        OWNER TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_redrive_candidates(uuid, uuid)
        OWNER TO redrive_pgboss_queue;
    REVOKE CREATE ON SCHEMA redrive_pgboss FROM redrive_pgboss_queue;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The reads: version 3's view, with pg-boss's row from queue_job.
CREATE OR REPLACE VIEW redrive_pgboss.job_state AS
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
       s.library_requeued_as, j, s.payload AS captured_payload, s.origin AS captured_origin
  FROM redrive.source_job s
  LEFT JOIN LATERAL redrive_pgboss.queue_job(s.job_ref::uuid, s.queue) j ON true
  LEFT JOIN LATERAL (SELECT a.message, a.error_class, a.error_code, a.stack_trace, a.attempt_no
                       FROM redrive.source_attempt a
                      WHERE a.source_job_id = s.id AND j.id IS NULL
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true
 WHERE s.source = 'pgboss';

-- The list (and what is built on it: failure groups, facets, the overview's buckets) reads the
-- jobs of Redrive's record in one call of queue_jobs_of; the case view and the actions read one
-- job with queue_job. The same columns and rules (a listed job is one pg-boss still has, so the
-- join is an inner one here). Not granted: read through the list views.
CREATE VIEW redrive_pgboss.job_state_listed AS
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
       s.library_requeued_as, j, s.payload AS captured_payload, s.origin AS captured_origin
  FROM redrive.source_job s
  JOIN redrive_pgboss.queue_jobs_of(
           ARRAY(SELECT r.job_ref::uuid FROM redrive.source_job r WHERE r.source = 'pgboss'
                  ORDER BY r.id),
           ARRAY(SELECT r.queue FROM redrive.source_job r WHERE r.source = 'pgboss'
                  ORDER BY r.id)) j
    ON j.id = s.job_ref::uuid AND j.name = s.queue
  LEFT JOIN LATERAL (SELECT a.message, a.error_class, a.error_code, a.stack_trace, a.attempt_no
                       FROM redrive.source_attempt a
                      WHERE a.source_job_id = s.id AND j.id IS NULL
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true
 WHERE s.source = 'pgboss';
REVOKE ALL ON redrive_pgboss.job_state_listed FROM PUBLIC;

CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, d.updated_at, 'pgboss'::text AS source,
       NULL::text AS state_note
  FROM redrive_pgboss.job_state_listed d
 WHERE d.job_state = 'failed';

-- ---------------------------------------------------------------------------------------------
-- The link from a job pg-boss's redrive() created: version 3's rule, pg-boss's rows read by
-- queue_redrive_candidates.
CREATE OR REPLACE FUNCTION redrive_pgboss.capture_library_redrive() RETURNS trigger
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
                     JOIN redrive_pgboss.queue_redrive_candidates(NEW.source_root_id, NEW.id) c
                       ON c.id = s2.job_ref::uuid AND c.name = s2.queue
                    WHERE s2.source = 'pgboss' AND s2.library_requeued_as IS NULL
                    ORDER BY s2.last_failed_at DESC NULLS LAST, s2.id DESC LIMIT 1);
    RETURN NULL;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The actions: Redrive's rows locked and changed as before (by the installer's functions,
-- through the skeleton); pg-boss's rows only through the confined functions.
CREATE OR REPLACE FUNCTION redrive_pgboss.lock_action_targets(p_targets jsonb, p_action text)
RETURNS SETOF redrive.source_target
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_jobs jsonb;
BEGIN
    SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.job_ref, 'name', s.queue)
                              ORDER BY s.id), '[]')
      INTO v_jobs
      FROM (SELECT s.id, s.job_ref, s.queue FROM redrive.source_job s
             WHERE s.source = 'pgboss'
               AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
             ORDER BY s.id FOR UPDATE) s;
    PERFORM redrive_pgboss.queue_lock_jobs(v_jobs);
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

CREATE OR REPLACE FUNCTION redrive_pgboss.change_jobs(p_rows redrive.source_target[],
                                                      p_action text, p_params jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_action NOT IN ('requeue', 'edit_and_requeue') THEN
        RAISE EXCEPTION 'pg-boss jobs change only on a requeue, not on %', p_action
              USING ERRCODE = 'feature_not_supported';
    END IF;
    PERFORM redrive_pgboss.queue_retry_jobs(
        (SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.job_ref, 'name', s.queue)
                                   ORDER BY s.id), '[]')
           FROM redrive.source_job s
          WHERE s.id IN (SELECT r.id FROM unnest(p_rows) r) AND s.source = 'pgboss'),
        (p_params ->> 'reset_attempts')::boolean,
        CASE WHEN p_action = 'edit_and_requeue' THEN p_params -> 'payload' END);
END
$$;

UPDATE redrive.source SET adapter_version = 5 WHERE name = 'pgboss';
