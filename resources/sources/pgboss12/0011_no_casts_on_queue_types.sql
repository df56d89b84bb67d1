-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss12 (pg-boss 12.x)", version 11: no cast on the queue's own types reaches Redrive's code
-- (docs/security.md, "The queue's own role").
--
-- The queue's application owns the job table's enum type (job_state), so it may CREATE CAST
-- from it to text. Cast lookup does not depend on search_path: the installer-owned capture
-- triggers (PL/pgSQL, planned again in every session) resolved `NEW.state = 'retry'` through
-- the application's implicit cast and ran its function as the installer (which granted the
-- application the operator roles, or made it a superuser after a superuser's install); and
-- every installer function or view created while such a cast existed (a reinstall the
-- application can force by dropping its schema) bound the application's function into the
-- adapter's views, which then ran it as each operator reading the list. Now:
--  - each capture trigger refuses, before it reads NEW, while a cast exists whose source or
--    target is a type of the job table's schema or of one of its columns (outside pg_catalog);
--  - each confined function refuses the same at its end (at every depth), so that no
--    installer-owned function or view goes on with the rows it returned;
--  - install-source refuses to install or reinstall while such a cast exists.
-- The rest of each function is as in versions 9 and 10.

CREATE OR REPLACE FUNCTION redrive_pgboss.queue_job(p_id uuid, p_name text)
RETURNS SETOF pgboss.job
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (see the header).
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (see the header).
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    RETURN QUERY SELECT q.* FROM pgboss.job q WHERE q.id = p_id AND q.name = p_name;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (see the header).
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- No cast on the queue's own types (see the header), at every depth.
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

CREATE OR REPLACE FUNCTION redrive_pgboss.queue_jobs_of(p_ids uuid[], p_names text[])
RETURNS SETOF pgboss.job
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (see the header).
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (see the header).
    v_cursors text := (SELECT pg_catalog.string_agg(pg_catalog.concat(c.name, ' ',
                                  EXTRACT(epoch FROM c.creation_time), ' ', c.statement), ','
                                  ORDER BY c.name)
                         FROM pg_catalog.pg_cursors c);
BEGIN
    RETURN QUERY SELECT q.* FROM unnest(p_ids, p_names) r(id, name)
                   JOIN pgboss.job q ON q.id = r.id AND q.name = r.name;
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (see the header).
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- No cast on the queue's own types (see the header), at every depth.
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

CREATE OR REPLACE FUNCTION redrive_pgboss.queue_lock_jobs(p_jobs jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (see the header).
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (see the header).
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
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (see the header).
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- No cast on the queue's own types (see the header), at every depth.
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

CREATE OR REPLACE FUNCTION redrive_pgboss.queue_retry_jobs(p_jobs jsonb, p_reset boolean,
                                                           p_payload jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
    -- Every setting of this session as the call starts (see the header).
    v_settings text := (SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                                    ',' ORDER BY s.name)
                          FROM pg_catalog.pg_settings s);
    -- This session's cursors as the call starts (see the header).
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
    -- At every depth: inside a trigger too, where installer-owned code goes on after
    -- this call (see the header).
    IF coalesce((SELECT pg_catalog.string_agg(pg_catalog.concat(s.name, '=', s.setting),
                                              ',' ORDER BY s.name)
                   FROM pg_catalog.pg_settings s), '')
       OPERATOR(pg_catalog.<>) coalesce(v_settings, '') THEN
        RAISE EXCEPTION 'a setting of the session was changed while the queue''s jobs were '
                        'read or changed: it would decide what the caller runs next'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    -- No cast on the queue's own types (see the header), at every depth.
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

-- queue_redrive_candidates is called only by the capture trigger (inside a trigger: no check).

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
    -- Before anything reads NEW: no cast on the queue's own types (see the header).
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
            CASE WHEN NEW.state = 'retry' AND isfinite(NEW.start_after)
                 THEN greatest(0, (extract(epoch FROM (NEW.start_after - now())) * 1000)::bigint)
                 -- Due since -infinity is due at once; due at infinity has no finite backoff.
                 WHEN NEW.state = 'retry' AND NEW.start_after = '-infinity' THEN 0
            END);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION redrive_pgboss.capture_success() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
BEGIN
    -- Before anything reads NEW: no cast on the queue's own types (see the header).
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
     WHERE source = 'pgboss' AND job_ref = NEW.id::text AND queue = NEW.name
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

CREATE OR REPLACE FUNCTION redrive_pgboss.capture_library_redrive() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
BEGIN
    -- Before anything reads NEW: no cast on the queue's own types (see the header).
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

UPDATE redrive.source SET adapter_version = 11 WHERE name = 'pgboss';
