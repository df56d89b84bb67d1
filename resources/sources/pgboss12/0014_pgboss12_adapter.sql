-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" for pg-boss 12 (schema version 46): the whole adapter, at version 14.
--
-- One file a line. Releases before the one-file adapters applied versions 1 to 13 one migration
-- at a time; `redrive install-source` replaces an adapter whose versions are not a beginning of
-- this line's (an earlier release's, pg-boss 10's line, or one made for another queue schema)
-- with this file, in one transaction, keeping Redrive's record of the jobs
-- (docs/architecture.md, "Library versions and adapter lines").
--
-- To change the adapter (docs/architecture.md, "One file a line, and the replace"): edit this
-- file, or ../pgboss_common for what both pg-boss lines define alike (the actions, the lists over
-- Redrive's own records, the capture of a success: included below with psql's `\ir`, so a change
-- there changes both lines). Any edit, a comment too, changes the checksum install-source
-- compares, and every installed adapter is then replaced by the new text. So rename each changed
-- line's file to its next version, keeping the name after the number (it names the line:
-- install-source leaves alone an adapter of this line newer than its own), and write that version
-- in this header, in the closing `UPDATE redrive.source SET adapter_version` and in tst_sources'
-- freshInstallIsTheLatestVersion. What each earlier version changed, and why, is in
-- docs/security.md and in the history of this folder.
--
-- pg-boss 10's adapter (resources/sources/pgboss/) cannot be installed on 12: its views name
-- columns 12 dropped. This line is pg-boss 10's adapter with what pg-boss 12 changed, read from
-- its dist/plans.js:
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

\ir ../pgboss_common/shared_definitions.sql

-- Error classes (classify_error, shared; retryable true is transient unless it is a timeout, by
-- redrive.classify_source_error's rules): pg-boss 12 keeps the error in the job's output.
CREATE FUNCTION redrive_pgboss.error_class(o jsonb) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN redrive_pgboss.classify_error(coalesce(o -> 'value', o), redrive_pgboss.error_message(o));

-- ---------------------------------------------------------------------------------------------
-- Capture: every failure pg-boss records becomes an attempt in redrive.source_attempt; a later
-- success of a job that failed before becomes one too. SECURITY DEFINER, so the application's
-- role needs no rights on Redrive's tables.
CREATE OR REPLACE FUNCTION redrive_pgboss.capture_failure() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
    v_message text;
    v_origin jsonb;
BEGIN
    -- Before anything reads a value of NEW: the type of each column read, from the row itself
    -- (docs/security.md, "The queue's own role").
    PERFORM redrive_pgboss.refuse_retyped_columns('pgboss.job'::pg_catalog.regclass,
        ARRAY['id', 'name', 'state', 'data', 'output', 'retry_count', 'started_on', 'start_after',
              'source_name', 'source_id', 'source_root_id'],
        ARRAY[pg_catalog.pg_typeof(NEW.id), pg_catalog.pg_typeof(NEW.name),
              pg_catalog.pg_typeof(NEW.state), pg_catalog.pg_typeof(NEW.data),
              pg_catalog.pg_typeof(NEW.output), pg_catalog.pg_typeof(NEW.retry_count),
              pg_catalog.pg_typeof(NEW.started_on), pg_catalog.pg_typeof(NEW.start_after),
              pg_catalog.pg_typeof(NEW.source_name), pg_catalog.pg_typeof(NEW.source_id),
              pg_catalog.pg_typeof(NEW.source_root_id)],
        ARRAY['pg_catalog.uuid', 'pg_catalog.text', 'pgboss.job_state', 'pg_catalog.jsonb',
              'pg_catalog.jsonb', 'pg_catalog.int4', 'pg_catalog.timestamptz',
              'pg_catalog.timestamptz', 'pg_catalog.text', 'pg_catalog.uuid',
              'pg_catalog.uuid']::pg_catalog.regtype[]);
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
    v_message := redrive_pgboss.error_message(NEW.output);
    v_origin := nullif(jsonb_strip_nulls(jsonb_build_object(
        'source_queue', NEW.source_name, 'source_id', NEW.source_id,
        'source_root_id', NEW.source_root_id)), '{}'::jsonb);
    INSERT INTO redrive.source_job AS s (source, job_ref, queue, kind, failures, first_failed_at,
                                         last_failed_at, payload, origin)
    VALUES ('pgboss', NEW.id::text, NEW.name, NEW.name, 1, v_now, v_now, NEW.data, v_origin)
    ON CONFLICT (source, job_ref) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now, payload = NEW.data, origin = v_origin
     WHERE s.queue = NEW.name
    RETURNING s.id INTO v_id;
    IF v_id IS NULL THEN
        RAISE WARNING 'redrive: pg-boss job % failed in queue %, but Redrive records job % of '
                      'another queue; this failure is not recorded', NEW.id, NEW.name, NEW.id;
        RETURN NULL;
    END IF;
    INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                        outcome, error_class, error_code, message, stack_trace,
                                        worker_id, backoff_ms)
    VALUES (v_id, NEW.retry_count + CASE WHEN NEW.started_on IS NULL THEN 0 ELSE 1 END,
            least(coalesce(NEW.started_on, v_now), v_now), v_now, 'failed',
            redrive_pgboss.error_class(NEW.output), redrive_pgboss.error_code(NEW.output),
            v_message, NEW.output ->> 'stack', NULL,
            -- enum_eq: the enum compared as itself, never through a cast
            -- (docs/security.md, "The queue's own role").
            CASE WHEN pg_catalog.enum_eq(NEW.state, 'retry') AND isfinite(NEW.start_after)
                 THEN greatest(0, (extract(epoch FROM (NEW.start_after - now())) * 1000)::bigint)
                 -- Due since -infinity is due at once; due at infinity has no finite backoff.
                 WHEN pg_catalog.enum_eq(NEW.state, 'retry') AND NEW.start_after = '-infinity'
                 THEN 0
            END);
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
CREATE OR REPLACE FUNCTION redrive_pgboss.capture_library_redrive() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
BEGIN
    -- Before anything reads a value of NEW: the type of each column read, from the row itself
    -- (docs/security.md, "The queue's own role").
    PERFORM redrive_pgboss.refuse_retyped_columns('pgboss.job'::pg_catalog.regclass,
        ARRAY['id', 'source_root_id'],
        ARRAY[pg_catalog.pg_typeof(NEW.id), pg_catalog.pg_typeof(NEW.source_root_id)],
        ARRAY['pg_catalog.uuid', 'pg_catalog.uuid']::pg_catalog.regtype[]);
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

REVOKE ALL ON FUNCTION redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text),
                       redrive_pgboss.error_class(jsonb)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text)
    TO redrive_oncall, redrive_support;
GRANT EXECUTE ON FUNCTION redrive_pgboss.error_class(jsonb)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- Jobs that failed before the install: their payload and origin from pg-boss's row.
UPDATE redrive.source_job s
   SET payload = j.data,
       origin = nullif(jsonb_strip_nulls(jsonb_build_object(
           'source_queue', j.source_name, 'source_id', j.source_id,
           'source_root_id', j.source_root_id)), '{}'::jsonb)
  FROM pgboss.job j
 WHERE s.source = 'pgboss' AND s.payload IS NULL
   AND j.id = s.job_ref::uuid AND j.name = s.queue AND j.state = 'failed';

-- Failed jobs whose dead-letter copy pg-boss's redrive() moved into another queue before the
-- install: the redriven job names the chain's first job as source_root_id.
UPDATE redrive.source_job s
   SET library_requeued_as = r.id::text, library_requeued_at = r.created_on
  FROM pgboss.job r
 WHERE s.source = 'pgboss' AND s.library_requeued_as IS NULL
   AND r.source_root_id = s.job_ref::uuid AND r.source_id IS NULL;

-- ---------------------------------------------------------------------------------------------
-- The confined functions: code the queue's application role can plant never runs with Redrive's
-- rights or an operator's (docs/security.md, "The queue's own role", which says why, and
-- "Nothing planted outlives the confined call").
--
-- Every read and every change of pgboss.job happens inside a SECURITY DEFINER function owned by
-- redrive_pgboss_queue (NOLOGIN, a member of nothing, no USAGE on Redrive's schemas, SELECT and
-- UPDATE on pgboss.job only): the views, the actions, and the capture trigger that links a job
-- pg-boss's redrive() created to the failure it came from (it ran as the installer, on the
-- application's own INSERT). Each confined function, at every depth (inside a trigger too):
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

-- The confined functions hand on the queue's
-- rows only while every column of the tables they read is of the library's own kind of type
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

CREATE OR REPLACE FUNCTION redrive_pgboss.queue_job(p_id uuid, p_name text)
RETURNS SETOF pgboss.job
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
    RETURN QUERY SELECT q.* FROM pgboss.job q WHERE q.id = p_id AND q.name = p_name;
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
                        pg_catalog.to_regclass('pgboss.job')
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
    -- No cast on the queue's own types (docs/security.md, "The queue's own role"), at every depth.
    IF EXISTS (SELECT FROM pg_catalog.pg_cast k
                WHERE k.castsource OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))
                   OR k.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))) THEN
        RAISE EXCEPTION 'a cast on a type of the queue''s job table exists: Redrive''s '
                        'functions would run it when they compare or convert a job''s values'
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
-- The reads, with pg-boss's row from queue_job.
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

-- The case view also finds a dead letter that was requeued (status requeued) or has since
-- succeeded (resolved, succeeded_after_requeue), for as long as pg-boss keeps the job.
CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_detail AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.stack_trace, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at,
       coalesce((d.j).data, d.captured_payload)::text AS payload_text, NULL::bytea AS payload_bytes,
       octet_length(coalesce((d.j).data, d.captured_payload)::text) AS payload_size,
       jsonb_build_object('queue_policy', (d.j).policy, 'priority', (d.j).priority,
                          'retry_limit', (d.j).retry_limit, 'retry_delay', (d.j).retry_delay,
                          'retry_backoff', (d.j).retry_backoff,
                          'expire_seconds', (d.j).expire_seconds,
                          'deletion_seconds', (d.j).deletion_seconds,
                          'deleted_by_pgboss_at', d.deleted_at,
                          'library_requeued_as', d.library_requeued_as,
                          'keep_until', (d.j).keep_until,
                          'singleton_key', (d.j).singleton_key,
                          'dead_letter_queue', (d.j).dead_letter, 'output', (d.j).output,
                          'origin', d.captured_origin,
                          'payload_from', CASE WHEN d.job_state = 'deleted' AND d.captured_payload IS NOT NULL
                                               THEN 'redrive_record' END)
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
REVOKE ALL ON redrive_pgboss.job_state FROM PUBLIC;
REVOKE ALL ON FUNCTION redrive_pgboss.retry_verdict(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.retry_verdict(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- The same for many jobs at once (p_ids[i] in queue p_names[i]), in one call: what the list
-- reads, so a page costs one call rather than one per job Redrive has a record of.
CREATE OR REPLACE FUNCTION redrive_pgboss.queue_jobs_of(p_ids uuid[], p_names text[])
RETURNS SETOF pgboss.job
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
    RETURN QUERY SELECT q.* FROM unnest(p_ids, p_names) r(id, name)
                   JOIN pgboss.job q ON q.id = r.id AND q.name = r.name;
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
                        pg_catalog.to_regclass('pgboss.job')
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
    -- No cast on the queue's own types (docs/security.md, "The queue's own role"), at every depth.
    IF EXISTS (SELECT FROM pg_catalog.pg_cast k
                WHERE k.castsource OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))
                   OR k.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))) THEN
        RAISE EXCEPTION 'a cast on a type of the queue''s job table exists: Redrive''s '
                        'functions would run it when they compare or convert a job''s values'
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

-- Locks pg-boss's rows of these jobs ([{"id": uuid, "name": queue}, ...]) in the order given.
CREATE OR REPLACE FUNCTION redrive_pgboss.queue_lock_jobs(p_jobs jsonb)
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
    PERFORM 1
       FROM jsonb_array_elements(p_jobs) WITH ORDINALITY e(v, n)
       JOIN pgboss.job q ON q.id = (e.v ->> 'id')::uuid AND q.name = e.v ->> 'name'
      ORDER BY e.n
        FOR UPDATE OF q;
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
                        pg_catalog.to_regclass('pgboss.job')
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
    -- No cast on the queue's own types (docs/security.md, "The queue's own role"), at every depth.
    IF EXISTS (SELECT FROM pg_catalog.pg_cast k
                WHERE k.castsource OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))
                   OR k.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))) THEN
        RAISE EXCEPTION 'a cast on a type of the queue''s job table exists: Redrive''s '
                        'functions would run it when they compare or convert a job''s values'
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

-- pg-boss 12's retry() of these failed jobs (dist/plans.js retryJobs):
-- state retry, one more attempt or with p_reset the whole budget again, completed_on cleared and
-- start_after no earlier than now; p_payload (not NULL) replaces the job's data (edit and requeue).
CREATE OR REPLACE FUNCTION redrive_pgboss.queue_retry_jobs(p_jobs jsonb, p_reset boolean,
                                                           p_payload jsonb)
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
                        pg_catalog.to_regclass('pgboss.job')
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
    -- No cast on the queue's own types (docs/security.md, "The queue's own role"), at every depth.
    IF EXISTS (SELECT FROM pg_catalog.pg_cast k
                WHERE k.castsource OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))
                   OR k.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) 'pgboss.job'::pg_catalog.regclass
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))) THEN
        RAISE EXCEPTION 'a cast on a type of the queue''s job table exists: Redrive''s '
                        'functions would run it when they compare or convert a job''s values'
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

GRANT SELECT ON redrive_pgboss.dead_letter_list, redrive_pgboss.dead_letter_detail
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

\ir ../pgboss_common/dead_letter_rollups.sql

REVOKE ALL ON redrive_pgboss.job_state_listed FROM PUBLIC;

UPDATE redrive.source SET adapter_version = 14 WHERE name = 'pgboss';
