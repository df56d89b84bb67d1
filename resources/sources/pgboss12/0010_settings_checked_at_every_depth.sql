-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss12 (pg-boss 12.x)", version 10: a setting changed during a confined call is refused inside a
-- trigger too (docs/security.md, "The queue's own role", "Nothing planted outlives the confined
-- call").
--
-- Since version 8 a confined call refused a changed setting only when it was made outside a
-- trigger. But an installer-owned trigger of an adapter may call confined functions and then go
-- on with statements of its own (graphile-worker's capture_failure did): a search_path planted
-- during such a call (by a policy on the queue's table that the confined function reads) made
-- the rest of the trigger find the application's operators first and run them as the
-- installer, which could grant the application the operator roles; fired from inside the
-- operator's own read (a planted UPDATE in the outer confined call), the application resolved
-- dead letters in the operator's name and put the path back before the outer call's check.
-- Now every confined function compares the settings at the end of every call, at any depth; the
-- deferrable-trigger and cursor checks stay for calls made outside a trigger (inside one, the
-- outer call's checks cover them). The rest of each function is as in version 8.

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

UPDATE redrive.source SET adapter_version = 10 WHERE name = 'pgboss';
