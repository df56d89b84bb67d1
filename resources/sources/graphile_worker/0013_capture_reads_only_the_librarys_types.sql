-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "graphile-worker", version 13: the capture triggers read the job's values only as
-- the library's own types, and refuse while a cast on a type of the queue's exists
-- (docs/security.md, "The queue's own role").
--
-- graphile-worker's tables use built-in types only, but the queue's application owns them: it
-- can drop a column the capture reads (`ALTER TABLE ... DROP COLUMN max_attempts CASCADE`) and
-- add it back with a type of its own that has an implicit or assignment cast to the built-in
-- one. The capture trigger (installer-owned, SECURITY DEFINER) then converted the column's
-- value through the application's cast (`NEW.attempts < NEW.max_attempts`) and ran its function
-- as the installer; the capture had no cast check at all. pg-boss's captures (since its version
-- 15) check pg_cast, but through the transaction's snapshot: in the application's own
-- REPEATABLE READ transaction a type and cast made by another session after the snapshot are
-- invisible to such a check, while the planner looks casts up in the catalog as it is now. Now
-- each capture trigger, before it reads any value of NEW or OLD:
--  - checks the type of every column it reads with pg_typeof(NEW.column), which comes from the
--    row itself, not from a catalog read under the snapshot, against the built-in type
--    graphile-worker gives the column; anything else is refused (SQLSTATE 55000, naming the
--    column and its type);
--  - refuses while a cast exists whose source or target is a type of the job table's schema or
--    of one of its columns (outside pg_catalog), as pg-boss's captures do: in READ COMMITTED it
--    refuses such a cast at once, before the type of the column changes.
-- Values of built-in types are compared with the built-in operators, which no cast of the
-- application's can replace (a cast between two built-in types needs a superuser). The rest of
-- capture_failure is as in version 11, of capture_success as in version 1.

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
    -- itself (see the header). OLD and NEW have the same row type.
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
    -- No cast on the queue's own types (as pg-boss's capture since its version 15; see the
    -- header).
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
    -- (see the header).
    PERFORM redrive_graphile.refuse_retyped_columns(TG_RELID,
        ARRAY['id', 'attempts', 'locked_at', 'locked_by'],
        ARRAY[pg_catalog.pg_typeof(OLD.id), pg_catalog.pg_typeof(OLD.attempts),
              pg_catalog.pg_typeof(OLD.locked_at), pg_catalog.pg_typeof(OLD.locked_by)],
        ARRAY['pg_catalog.int8', 'pg_catalog.int2', 'pg_catalog.timestamptz',
              'pg_catalog.text']::pg_catalog.regtype[]);
    -- No cast on the queue's own types (as pg-boss's capture since its version 15; see the
    -- header).
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
UPDATE redrive.source SET adapter_version = 13 WHERE name = 'graphile-worker';
