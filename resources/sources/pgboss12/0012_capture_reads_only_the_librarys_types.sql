-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss12 (pg-boss 12.x)", version 12: the capture triggers read the job's values
-- only as the library's own types, whatever the transaction's snapshot
-- (docs/security.md, "The queue's own role").
--
-- Version 11 refused while pg_cast held a cast on a type of the queue's. It read pg_cast through
-- the transaction's snapshot: in the application's own REPEATABLE READ transaction a cast created
-- (and committed by another session) after that snapshot was invisible to the check, while the
-- planner, which looks casts up in the catalog as it is now, resolved `NEW.state = 'retry'`
-- through it and ran the application's function as the installer. Now each capture trigger,
-- before it reads any value of NEW:
--  - checks the type of every column it reads with pg_typeof(NEW.column), which comes from the
--    row itself, not from a catalog read under the snapshot: the built-in type pg-boss gives the
--    column, or the queue schema's own enum job_state; anything else is refused (SQLSTATE 55000,
--    naming the column and its type), since a column of the application's type is converted
--    through the application's casts;
--  - compares the enum job_state without operator resolution: pg_catalog.enum_eq has one
--    candidate, takes the enum itself (polymorphic, exact) and considers no cast, so no cast
--    from job_state is ever looked for; values of the built-in types are compared with the
--    built-in operators, which no cast of the application's can replace (a cast between two
--    built-in types needs a superuser);
--  - keeps version 11's pg_cast check, which still refuses at once in READ COMMITTED.
-- The rest of each function is as in version 11.

-- Refuses (SQLSTATE 55000) when a column of `p_table` that a capture trigger reads has another
-- type than the one the library gives it. `p_columns`, `p_types` (pg_typeof of the row's value)
-- and `p_expected` are parallel arrays. Called only by the capture triggers.
CREATE FUNCTION redrive_pgboss.refuse_retyped_columns(p_table pg_catalog.regclass,
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
REVOKE ALL ON FUNCTION redrive_pgboss.refuse_retyped_columns(pg_catalog.regclass, text[],
                                                             pg_catalog.regtype[],
                                                             pg_catalog.regtype[]) FROM PUBLIC;

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
    -- (see the header).
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
    -- No cast on the queue's own types (version 11; see the header).
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
            -- enum_eq: the enum compared as itself, never through a cast (see the header).
            CASE WHEN pg_catalog.enum_eq(NEW.state, 'retry') AND isfinite(NEW.start_after)
                 THEN greatest(0, (extract(epoch FROM (NEW.start_after - now())) * 1000)::bigint)
                 -- Due since -infinity is due at once; due at infinity has no finite backoff.
                 WHEN pg_catalog.enum_eq(NEW.state, 'retry') AND NEW.start_after = '-infinity'
                 THEN 0
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
    -- Before anything reads a value of NEW: the type of each column read, from the row itself
    -- (see the header).
    PERFORM redrive_pgboss.refuse_retyped_columns('pgboss.job'::pg_catalog.regclass,
        ARRAY['id', 'name', 'retry_count', 'started_on'],
        ARRAY[pg_catalog.pg_typeof(NEW.id), pg_catalog.pg_typeof(NEW.name),
              pg_catalog.pg_typeof(NEW.retry_count), pg_catalog.pg_typeof(NEW.started_on)],
        ARRAY['pg_catalog.uuid', 'pg_catalog.text', 'pg_catalog.int4',
              'pg_catalog.timestamptz']::pg_catalog.regtype[]);
    -- No cast on the queue's own types (version 11; see the header).
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
    -- Before anything reads a value of NEW: the type of each column read, from the row itself
    -- (see the header).
    PERFORM redrive_pgboss.refuse_retyped_columns('pgboss.job'::pg_catalog.regclass,
        ARRAY['id', 'source_root_id'],
        ARRAY[pg_catalog.pg_typeof(NEW.id), pg_catalog.pg_typeof(NEW.source_root_id)],
        ARRAY['pg_catalog.uuid', 'pg_catalog.uuid']::pg_catalog.regtype[]);
    -- No cast on the queue's own types (version 11; see the header).
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

UPDATE redrive.source SET adapter_version = 12 WHERE name = 'pgboss';
