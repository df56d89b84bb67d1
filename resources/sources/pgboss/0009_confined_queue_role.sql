-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" (pg-boss 10.x), version 9: code the queue's application role can plant
-- never runs with Redrive's rights or an operator's (docs/security.md, "The queue's own role").
--
-- Until version 8 the actions changed pgboss.job as the role that installed the source (their
-- SECURITY DEFINER owner) and the views read it as the operator who opened the list. The
-- application role owns pgboss.job: a trigger, rule, check constraint or row-level-security
-- policy it adds runs as whoever touches the table, so a trigger ran as the installer (a
-- superuser install made the application's login a superuser) and a policy ran as the on-call
-- operator (Redrive's role checks look at session_user, so it resolved dead letters in their
-- name).
--
-- Now every read and every change of pg-boss's tables happens inside a SECURITY DEFINER
-- function owned by redrive_pgboss_queue: a NOLOGIN role that is a member of nothing, holds no
-- Redrive role, has no USAGE on Redrive's schemas (so it can name, call or alter none of their
-- functions, its own included) and holds only what those functions need on pg-boss's tables.
-- Whatever the application plants runs as that role. SET ROLE, RESET ROLE and SET SESSION
-- AUTHORIZATION are refused inside a SECURITY DEFINER function, so it cannot climb back.
-- The role is cluster-wide (roles are); in each database it holds only that database's grants.

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
    GRANT SELECT, INSERT, UPDATE ON pgboss.job TO redrive_pgboss_queue;
    IF to_regclass('pgboss.archive') IS NOT NULL THEN
        GRANT SELECT, DELETE ON pgboss.archive TO redrive_pgboss_queue;
    END IF;
    -- GRANT by a role without the grant option only warns: check what it got.
    IF NOT (pg_catalog.has_schema_privilege('redrive_pgboss_queue', v_queue::oid, 'USAGE')
            AND pg_catalog.has_table_privilege('redrive_pgboss_queue', 'pgboss.job',
                                               'SELECT, INSERT, UPDATE')
            AND (to_regclass('pgboss.archive') IS NULL
                 OR pg_catalog.has_table_privilege('redrive_pgboss_queue', 'pgboss.archive',
                                                   'SELECT, DELETE'))) THEN
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
-- The confined functions. Each is SECURITY DEFINER, owned by redrive_pgboss_queue, with the
-- search path pinned, and names only pg-boss's tables. Not granted to PUBLIC.

-- The job with this id in this queue as pg-boss holds it, in pgboss.job or (failed) in
-- pgboss.archive with when it was archived: what the views read instead of pg-boss's tables.
CREATE FUNCTION redrive_pgboss.queue_job(p_id uuid, p_name text)
RETURNS TABLE (j pgboss.job, archived_on timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT q, NULL::timestamptz FROM pgboss.job q
                  WHERE q.id = p_id AND q.name = p_name;
    IF FOUND OR to_regclass('pgboss.archive') IS NULL THEN
        RETURN;
    END IF;
    -- Dynamic, so a pg-boss without the archive table is not blocked by this function.
    RETURN QUERY EXECUTE
        'SELECT jsonb_populate_record(NULL::pgboss.job, to_jsonb(a)), a.archived_on
           FROM pgboss.archive a WHERE a.id = $1 AND a.name = $2 AND a.state = ''failed'''
        USING p_id, p_name;
END
$$;

-- The same for many jobs at once (p_ids[i] in queue p_names[i]), in one call: what the list
-- reads, so a page costs one call rather than one per job Redrive has a record of.
CREATE FUNCTION redrive_pgboss.queue_jobs_of(p_ids uuid[], p_names text[])
RETURNS TABLE (j pgboss.job, archived_on timestamptz)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT q, NULL::timestamptz
                   FROM unnest(p_ids, p_names) r(id, name)
                   JOIN pgboss.job q ON q.id = r.id AND q.name = r.name;
    IF to_regclass('pgboss.archive') IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE
        'SELECT jsonb_populate_record(NULL::pgboss.job, to_jsonb(a)), a.archived_on
           FROM unnest($1, $2) r(id, name)
           JOIN pgboss.archive a ON a.id = r.id AND a.name = r.name AND a.state = ''failed''
          WHERE NOT EXISTS (SELECT 1 FROM pgboss.job q WHERE q.id = r.id AND q.name = r.name)'
        USING p_ids, p_names;
END
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

-- pg-boss 10's retry() of these failed jobs (src/plans.js retryJobs; versions 3 and 5 of this
-- adapter): an archived one moved back into pgboss.job first (state created), then state retry
-- with one more attempt, or the whole budget again with p_reset; p_payload (not NULL) replaces
-- the job's data (edit and requeue).
CREATE FUNCTION redrive_pgboss.queue_retry_jobs(p_jobs jsonb, p_reset boolean, p_payload jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF to_regclass('pgboss.archive') IS NOT NULL THEN
        EXECUTE $sql$
            WITH moved AS (
                DELETE FROM pgboss.archive a
                 USING jsonb_array_elements($1) e(v)
                 WHERE a.id = (e.v ->> 'id')::uuid AND a.name = e.v ->> 'name'
                   AND a.state = 'failed'
                RETURNING a.*)
            INSERT INTO pgboss.job (id, name, priority, data, state, retry_limit, retry_count,
                                    retry_delay, retry_backoff, start_after, started_on,
                                    singleton_key, singleton_on, expire_in, created_on,
                                    completed_on, keep_until, dead_letter, policy, output)
            SELECT m.id, m.name, m.priority, coalesce($2, m.data),
                   'created', CASE WHEN $3 THEN m.retry_limit ELSE m.retry_limit + 1 END,
                   CASE WHEN $3 THEN 0 ELSE m.retry_count END, m.retry_delay, m.retry_backoff,
                   now(), CASE WHEN $3 THEN NULL ELSE m.started_on END, m.singleton_key,
                   m.singleton_on, m.expire_in, m.created_on, NULL,
                   greatest(m.keep_until, now() + interval '14 days'), m.dead_letter, m.policy,
                   m.output
              FROM moved m
        $sql$ USING p_jobs, p_payload, p_reset;
    END IF;
    UPDATE pgboss.job q
       SET data = coalesce(p_payload, q.data),
           state = 'retry',
           retry_limit = CASE WHEN p_reset THEN q.retry_limit ELSE q.retry_limit + 1 END,
           retry_count = CASE WHEN p_reset THEN 0 ELSE q.retry_count END,
           started_on = CASE WHEN p_reset THEN NULL ELSE q.started_on END
      FROM jsonb_array_elements(p_jobs) e(v)
     WHERE q.id = (e.v ->> 'id')::uuid AND q.name = e.v ->> 'name' AND q.state = 'failed';
END
$$;

REVOKE ALL ON FUNCTION redrive_pgboss.queue_job(uuid, text),
                       redrive_pgboss.queue_jobs_of(uuid[], text[]),
                       redrive_pgboss.queue_lock_jobs(jsonb),
                       redrive_pgboss.queue_retry_jobs(jsonb, boolean, jsonb)
    FROM PUBLIC;
-- The views call queue_job as their reader; the actions' functions (owned by the installer)
-- call all three.
GRANT EXECUTE ON FUNCTION redrive_pgboss.queue_job(uuid, text),
                          redrive_pgboss.queue_jobs_of(uuid[], text[])
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
DO $$
BEGIN
    EXECUTE format('GRANT EXECUTE ON FUNCTION redrive_pgboss.queue_job(uuid, text), '
                   'redrive_pgboss.queue_jobs_of(uuid[], text[]), '
                   'redrive_pgboss.queue_lock_jobs(jsonb), '
                   'redrive_pgboss.queue_retry_jobs(jsonb, boolean, jsonb) TO %I', current_user);
    -- ALTER ... OWNER TO needs the new owner to have CREATE on the schema: only for as long as
    -- the changes of owner take.
    GRANT CREATE ON SCHEMA redrive_pgboss TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_job(uuid, text) OWNER TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_jobs_of(uuid[], text[]) OWNER TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_lock_jobs(jsonb) OWNER TO redrive_pgboss_queue;
    ALTER FUNCTION redrive_pgboss.queue_retry_jobs(jsonb, boolean, jsonb)
        OWNER TO redrive_pgboss_queue;
    REVOKE CREATE ON SCHEMA redrive_pgboss FROM redrive_pgboss_queue;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The reads: version 5's view, with pg-boss's row from queue_job.
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
  JOIN LATERAL redrive_pgboss.queue_job(s.job_ref::uuid, s.queue) u ON true
 WHERE s.source = 'pgboss';

-- The list (and what is built on it: failure groups, facets, the overview's buckets) reads every
-- job of Redrive's record in one call of queue_jobs_of; the case view and the actions read one
-- job with queue_job. Both views have the same columns and rules. Not granted: read through the
-- list views.
CREATE VIEW redrive_pgboss.job_state_listed AS
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
  JOIN redrive_pgboss.queue_jobs_of(
           ARRAY(SELECT r.job_ref::uuid FROM redrive.source_job r WHERE r.source = 'pgboss'
                  ORDER BY r.id),
           ARRAY(SELECT r.queue FROM redrive.source_job r WHERE r.source = 'pgboss'
                  ORDER BY r.id)) u
    ON (u.j).id = s.job_ref::uuid AND (u.j).name = s.queue
 WHERE s.source = 'pgboss';
REVOKE ALL ON redrive_pgboss.job_state_listed FROM PUBLIC;

CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, d.updated_at, 'pgboss'::text AS source,
       CASE WHEN d.job_state = 'archived' THEN 'archived' END AS state_note
  FROM redrive_pgboss.job_state_listed d
 WHERE d.job_state IN ('failed', 'archived');

-- Version 5 read the archive through this (owned by the installer); nothing calls it now.
DROP FUNCTION redrive_pgboss.archived_failure(uuid, text);

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

UPDATE redrive.source SET adapter_version = 9 WHERE name = 'pgboss';
