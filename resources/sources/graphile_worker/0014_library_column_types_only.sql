-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "graphile-worker", version 14: the confined functions hand on the queue's rows
-- only while every column of the tables they read is of the library's own kind of type
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

CREATE OR REPLACE FUNCTION redrive_graphile.queue_job_queues()
RETURNS TABLE (id integer, queue_name text)
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
    RETURN QUERY SELECT q.id, q.queue_name FROM graphile_worker._private_job_queues q;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth (see the header).
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
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

CREATE OR REPLACE FUNCTION redrive_graphile.queue_jobs()
RETURNS SETOF graphile_worker._private_jobs
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
    RETURN QUERY SELECT j.* FROM graphile_worker._private_jobs j;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth (see the header).
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
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

CREATE OR REPLACE FUNCTION redrive_graphile.queue_lock_jobs(p_job_ids bigint[])
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
    PERFORM 1 FROM graphile_worker._private_jobs j WHERE j.id = ANY (p_job_ids)
     ORDER BY j.id FOR UPDATE;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth (see the header).
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
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

CREATE OR REPLACE FUNCTION redrive_graphile.queue_release_job(p_job_id bigint, p_worker text,
                                                              p_job_queue_id integer)
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
    UPDATE graphile_worker._private_jobs
       SET locked_at = NULL, locked_by = NULL, run_at = greatest(run_at, now())
     WHERE id = p_job_id AND locked_by = p_worker;
    UPDATE graphile_worker._private_job_queues
       SET locked_at = NULL, locked_by = NULL
     WHERE id = p_job_queue_id AND locked_by = p_worker;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth (see the header).
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
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

CREATE OR REPLACE FUNCTION redrive_graphile.queue_reschedule_job(p_job_id bigint, p_payload json,
                                                                 p_attempts integer,
                                                                 p_max_attempts integer)
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
    IF p_payload IS NOT NULL THEN
        UPDATE graphile_worker._private_jobs SET payload = p_payload WHERE id = p_job_id;
    END IF;
    PERFORM graphile_worker.reschedule_jobs(ARRAY[p_job_id], run_at => now(),
                                            attempts => p_attempts,
                                            max_attempts => p_max_attempts);
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth (see the header).
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
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

CREATE OR REPLACE FUNCTION redrive_graphile.queue_tasks()
RETURNS TABLE (id integer, identifier text)
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
    RETURN QUERY SELECT t.id, t.identifier FROM graphile_worker._private_tasks t;
    -- Every column of the queue's tables read here is of a built-in type or an enum of the
    -- queue's schema (or an array of one), at every depth (see the header).
    IF EXISTS (SELECT FROM pg_catalog.pg_attribute a
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
                 JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
                 LEFT JOIN pg_catalog.pg_type e ON e.oid OPERATOR(pg_catalog.=) t.typelem
                       AND t.typsubscript OPERATOR(pg_catalog.=)
                           'pg_catalog.array_subscript_handler'::pg_catalog.regproc
                WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[
                        pg_catalog.to_regclass('graphile_worker._private_jobs'),
                        pg_catalog.to_regclass('graphile_worker._private_tasks'),
                        pg_catalog.to_regclass('graphile_worker._private_job_queues')
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

UPDATE redrive.source SET adapter_version = 14 WHERE name = 'graphile-worker';
