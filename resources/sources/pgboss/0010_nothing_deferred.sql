-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" (pg-boss 10.x), version 10: nothing the queue's application role plants
-- can run at the operator's COMMIT (docs/security.md, "The queue's own role", "Nothing planted
-- outlives the confined call").
--
-- A DEFERRABLE trigger is queued while a confined function runs (a constraint trigger on
-- pgboss.job, or on a table a planted trigger or policy writes to, a temporary table included)
-- and fires at COMMIT, after every SECURITY DEFINER function has returned: as the operator. So
-- every confined function ends by refusing, with an error that rolls the whole transaction
-- back, while any deferrable trigger exists in this database other than a foreign key's (whose
-- fixed C code runs its query as a table's owner, never as the operator). A deferrable unique or
-- exclusion constraint counts: its recheck at COMMIT calls the column type's operators, which
-- the application may have written. The check reads the catalog as of the end of the function:
-- the readers become VOLATILE for that (a STABLE function does not see what the code it called
-- created), and the list's frozen pass is READ ONLY (docs/architecture.md), so nothing but this
-- session's own temporary tables can be written there and a trigger another session commits
-- meanwhile cannot fire in it. Skipped only inside a trigger (pg_trigger_depth() > 0): the
-- library's own worker's transactions, which are not an operator's; in an operator's
-- transaction every call of a confined function starts outside any trigger (the actions and
-- the views call them) and ends with the check.
--
-- The same check refuses when this session's cursors (pg_cursors) changed during the call or one
-- of them is holdable: COMMIT runs a cursor declared WITH HOLD to its end as the operator, and a
-- cursor of the console's frozen pass closed and declared again under its name would run the new
-- query at the next FETCH.
--
-- Every name in the check is qualified, operators included: code the call ran may have set the
-- session's search_path (a SET clause does not undo a plain SET made inside the function).

CREATE OR REPLACE FUNCTION redrive_pgboss.queue_job(p_id uuid, p_name text)
RETURNS TABLE (j pgboss.job, archived_on timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_trigger text;
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

UPDATE redrive.source SET adapter_version = 10 WHERE name = 'pgboss';
