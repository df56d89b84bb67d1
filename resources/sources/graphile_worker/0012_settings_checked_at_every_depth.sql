-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "graphile-worker", version 12: a setting changed during a confined call is refused inside a
-- trigger too (docs/security.md, "The queue's own role", "Nothing planted outlives the confined
-- call").
--
-- Since version 10 a confined call refused a changed setting only when it was made outside a
-- trigger. But an installer-owned trigger of an adapter may call confined functions and then go
-- on with statements of its own (graphile-worker's capture_failure did): a search_path planted
-- during such a call (by a policy on the queue's table that the confined function reads) made
-- the rest of the trigger find the application's operators first and run them as the
-- installer, which could grant the application the operator roles; fired from inside the
-- operator's own read (a planted UPDATE in the outer confined call), the application resolved
-- dead letters in the operator's name and put the path back before the outer call's check.
-- Now every confined function compares the settings at the end of every call, at any depth; the
-- deferrable-trigger and cursor checks stay for calls made outside a trigger (inside one, the
-- outer call's checks cover them). The rest of each function is as in version 10.

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

UPDATE redrive.source SET adapter_version = 12 WHERE name = 'graphile-worker';
