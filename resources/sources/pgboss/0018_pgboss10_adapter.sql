-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss": pg-boss 10.x (schema versions 21-24) as a source of dead letters, the
-- whole adapter at version 18. Applied by `redrive install-source pgboss` into schema
-- redrive_pgboss (the installer created it and its schema_version table) in one transaction;
-- requires Redrive's own schema (migration 6) and pg-boss's schema "pgboss".
--
-- One file a line. Releases before the one-file adapters applied versions 1 to 17 one migration
-- at a time; `redrive install-source` replaces an adapter whose versions are not a beginning of
-- this line's (an earlier release's, pg-boss 12's line, or one made for another queue schema)
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

\ir ../pgboss_common/shared_definitions.sql

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
BEGIN
    -- Before anything reads a value of NEW: the type of each column read, from the row itself
    -- (docs/security.md, "The queue's own role").
    PERFORM redrive_pgboss.refuse_retyped_columns('pgboss.job'::pg_catalog.regclass,
        ARRAY['id', 'name', 'state', 'output', 'retry_count', 'started_on', 'start_after'],
        ARRAY[pg_catalog.pg_typeof(NEW.id), pg_catalog.pg_typeof(NEW.name),
              pg_catalog.pg_typeof(NEW.state), pg_catalog.pg_typeof(NEW.output),
              pg_catalog.pg_typeof(NEW.retry_count), pg_catalog.pg_typeof(NEW.started_on),
              pg_catalog.pg_typeof(NEW.start_after)],
        ARRAY['pg_catalog.uuid', 'pg_catalog.text', 'pgboss.job_state', 'pg_catalog.jsonb',
              'pg_catalog.int4', 'pg_catalog.timestamptz',
              'pg_catalog.timestamptz']::pg_catalog.regtype[]);
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
    INSERT INTO redrive.source_job AS s (source, job_ref, queue, kind, failures, first_failed_at,
                                         last_failed_at)
    VALUES ('pgboss', NEW.id::text, NEW.name, NEW.name, 1, v_now, v_now)
    ON CONFLICT (source, job_ref) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now
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

-- History starts now: jobs that already failed for good keep the one error pg-boss kept.
INSERT INTO redrive.source_job (source, job_ref, queue, kind, failures, first_failed_at,
                                last_failed_at)
SELECT 'pgboss', j.id::text, j.name, j.name, 0, j.completed_on, j.completed_on
  FROM pgboss.job j WHERE j.state = 'failed'
ON CONFLICT (source, job_ref) DO NOTHING;

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
-- It bounds its lock waits like every action.
ALTER FUNCTION redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text)
    SET lock_timeout = '10s';
REVOKE ALL ON FUNCTION redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text)
    TO redrive_oncall, redrive_support;

-- Error classes (classify_error, shared): pg-boss 10 keeps the error in the job's output.
CREATE OR REPLACE FUNCTION redrive_pgboss.error_class(o jsonb) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN redrive_pgboss.classify_error(coalesce(o -> 'value', o), redrive_pgboss.error_message(o));
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

REVOKE ALL ON FUNCTION redrive_pgboss.error_class(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.error_class(jsonb)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- ---------------------------------------------------------------------------------------------
-- The confined functions: code the queue's application role can plant never runs with Redrive's
-- rights or an operator's (docs/security.md, "The queue's own role", and "Nothing planted
-- outlives the confined call").
--
-- Were the actions to change pgboss.job as the role that installed the source (their
-- SECURITY DEFINER owner), and the views to read it as the operator who opened the list: the
-- application role owns pgboss.job: a trigger, rule, check constraint or row-level-security
-- policy it adds runs as whoever touches the table, so a trigger would run as the installer (a
-- superuser install made the application's login a superuser) and a policy as the on-call
-- operator (Redrive's role checks look at session_user, so it resolved dead letters in their
-- name). Both were found by attackers of earlier versions.
--
-- So every read and every change of pg-boss's tables happens inside a SECURITY DEFINER
-- function owned by redrive_pgboss_queue: a NOLOGIN role that is a member of nothing, holds no
-- Redrive role, has no USAGE on Redrive's schemas (so it can name, call or alter none of their
-- functions, its own included) and holds only what those functions need on pg-boss's tables.
-- Whatever the application plants runs as that role. SET ROLE, RESET ROLE and SET SESSION
-- AUTHORIZATION are refused inside a SECURITY DEFINER function, so it cannot climb back.
-- The role is cluster-wide (roles are); in each database it holds only that database's grants.
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
RETURNS TABLE (j pgboss.job, archived_on timestamptz)
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
    RETURN QUERY SELECT q, NULL::timestamptz FROM pgboss.job q
                  WHERE q.id = p_id AND q.name = p_name;
    IF NOT FOUND AND to_regclass('pgboss.archive') IS NOT NULL THEN
        -- Dynamic, so a pg-boss without the archive table is not blocked by this function.
        RETURN QUERY EXECUTE
            'SELECT jsonb_populate_record(NULL::pgboss.job, to_jsonb(a)), a.archived_on
               FROM pgboss.archive a WHERE a.id = $1 AND a.name = $2 AND a.state = ''failed'''
            USING p_id, p_name;
    END IF;
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
                        pg_catalog.to_regclass('pgboss.job'),
                        pg_catalog.to_regclass('pgboss.archive')
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
REVOKE ALL ON redrive_pgboss.job_state FROM PUBLIC;
REVOKE ALL ON FUNCTION redrive_pgboss.retry_verdict(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.retry_verdict(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- The same for many jobs at once (p_ids[i] in queue p_names[i]), in one call: what the list
-- reads, so a page costs one call rather than one per job Redrive has a record of.
CREATE OR REPLACE FUNCTION redrive_pgboss.queue_jobs_of(p_ids uuid[], p_names text[])
RETURNS TABLE (j pgboss.job, archived_on timestamptz)
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
    RETURN QUERY SELECT q, NULL::timestamptz
                   FROM unnest(p_ids, p_names) r(id, name)
                   JOIN pgboss.job q ON q.id = r.id AND q.name = r.name;
    IF to_regclass('pgboss.archive') IS NOT NULL THEN
        RETURN QUERY EXECUTE
            'SELECT jsonb_populate_record(NULL::pgboss.job, to_jsonb(a)), a.archived_on
               FROM unnest($1, $2) r(id, name)
               JOIN pgboss.archive a ON a.id = r.id AND a.name = r.name AND a.state = ''failed''
              WHERE NOT EXISTS (SELECT 1 FROM pgboss.job q WHERE q.id = r.id AND q.name = r.name)'
            USING p_ids, p_names;
    END IF;
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
                        pg_catalog.to_regclass('pgboss.job'),
                        pg_catalog.to_regclass('pgboss.archive')
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
                        pg_catalog.to_regclass('pgboss.job'),
                        pg_catalog.to_regclass('pgboss.archive')
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

-- pg-boss 10's retry() of these failed jobs (src/plans.js retryJobs): an archived one moved back
-- into pgboss.job first (state created), then state retry with one more attempt, or the whole
-- budget again with p_reset; p_payload (not NULL) replaces the job's data (edit and requeue).
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
                        pg_catalog.to_regclass('pgboss.job'),
                        pg_catalog.to_regclass('pgboss.archive')
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

GRANT SELECT ON redrive_pgboss.dead_letter_list, redrive_pgboss.dead_letter_detail
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

\ir ../pgboss_common/dead_letter_rollups.sql

REVOKE ALL ON redrive_pgboss.job_state_listed FROM PUBLIC;

UPDATE redrive.source SET adapter_version = 18 WHERE name = 'pgboss';
