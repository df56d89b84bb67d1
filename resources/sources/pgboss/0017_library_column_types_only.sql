-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss (pg-boss 10.x)", version 17: the confined functions hand on the queue's
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
-- COPY TO PROGRAM). install-source refuses such a column before it reads anything; now each
-- confined function refuses it too, after its read (which holds the tables' lock, so the
-- columns cannot change until the transaction ends) and before anything goes on with its rows:
-- every column must be of a built-in type (created with the cluster, OID below 16384; a cast
-- between two of them needs a superuser) or an enum of the table's own schema, or an array of
-- one, whose casts the check that follows refuses. The rest of each function is as before.

CREATE OR REPLACE FUNCTION redrive_pgboss.queue_job(p_id uuid, p_name text)
RETURNS TABLE (j pgboss.job, archived_on timestamptz)
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
    -- queue's schema (or an array of one), at every depth (see the header).
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
RETURNS TABLE (j pgboss.job, archived_on timestamptz)
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
    -- queue's schema (or an array of one), at every depth (see the header).
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
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth (see the header).
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
    -- queue's schema (or an array of one), at every depth (see the header).
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

UPDATE redrive.source SET adapter_version = 17 WHERE name = 'pgboss';
