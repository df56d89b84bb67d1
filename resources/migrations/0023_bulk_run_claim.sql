-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 23: a bulk's run lock that no other login can hold
-- (docs/reliability.md#bulk-actions-survive-the-console, docs/security.md).
--
-- Since version 15 a running bulk held a session-level advisory lock keyed by a hash of its id.
-- Any login may take any advisory lock, and pg_locks shows every held key to everyone, so a login
-- with no Redrive role could wait on the key of a running bulk and hold it once the owner's
-- console crashed: the bulk could then never be resumed, taken over or given up.
--
-- Now each run takes an advisory lock on a fresh random key and records which session holds it
-- (bulk_operation.run_pid, run_key), through begin_bulk_run only, which checks the caller's role
-- and that the caller owns the bulk. A bulk is running while that session holds that key: the
-- lock still goes with the session (a killed backend or a crashed console frees it at once),
-- and a lock anyone else takes, on any key, is ignored. begin_bulk_run, take_over_bulk and
-- abandon_bulk decide with the bulk's row locked, so two of them never race.

ALTER TABLE redrive.bulk_operation ADD COLUMN run_pid integer;
ALTER TABLE redrive.bulk_operation ADD COLUMN run_key integer;
COMMENT ON COLUMN redrive.bulk_operation.run_pid IS
    'The backend running the bulk''s chunks, while it holds the advisory lock (bulk_run_lock_class(), run_key); set by begin_bulk_run';
COMMENT ON COLUMN redrive.bulk_operation.run_key IS
    'The random advisory-lock key of the current run (see run_pid)';

-- The backend running p_bulk_id now: the one begin_bulk_run recorded, while it still holds the
-- run's lock; NULL when none does. Locks other sessions hold, on whatever key, do not count.
CREATE OR REPLACE FUNCTION redrive.bulk_run_holder(p_bulk_id uuid) RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT l.pid
          FROM redrive.bulk_operation b
          JOIN pg_catalog.pg_locks l
            ON l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
           AND l.pid = b.run_pid
           AND l.database = (SELECT oid FROM pg_catalog.pg_database
                              WHERE datname = current_database())
           AND l.classid = redrive.bulk_run_lock_class()::oid
           AND l.objid = (b.run_key::bigint & 4294967295)::oid
         WHERE b.bulk_id = p_bulk_id
         LIMIT 1);

CREATE OR REPLACE FUNCTION redrive.begin_bulk_run(p_bulk_id uuid)
RETURNS TABLE (bulk_id uuid, action text, os_user text, targets jsonb, target_count integer,
               chunk_size integer, params jsonb, reason text, ticket text,
               chunks_done integer[], applied integer, conflicts integer, refused integer)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_bulk redrive.bulk_operation%ROWTYPE;
    v_holder integer;
    v_key integer;
BEGIN
    SELECT * INTO v_bulk FROM redrive.bulk_operation b WHERE b.bulk_id = p_bulk_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no bulk action %', p_bulk_id USING ERRCODE = 'no_data_found';
    END IF;
    PERFORM redrive.require_role(redrive.bulk_roles(v_bulk.action));
    -- The row locked from here on: a second begin, a take-over or a give-up waits for this one.
    SELECT * INTO v_bulk FROM redrive.bulk_operation b WHERE b.bulk_id = p_bulk_id FOR UPDATE;
    IF v_bulk.actor <> session_user THEN
        RAISE EXCEPTION 'bulk action % belongs to %; only its owner runs its chunks',
                        p_bulk_id, v_bulk.actor
              USING ERRCODE = 'insufficient_privilege',
                    HINT = 'Take it over first (needs a role that may run its action).';
    END IF;
    IF v_bulk.abandoned_at IS NOT NULL THEN
        RAISE EXCEPTION 'bulk action % was abandoned by % at %', p_bulk_id, v_bulk.abandoned_by,
                        v_bulk.abandoned_at
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    v_holder := redrive.bulk_run_holder(p_bulk_id);
    IF v_holder IS NOT NULL AND v_holder <> pg_backend_pid() THEN
        RAISE EXCEPTION 'bulk action % is being run in another session', p_bulk_id
              USING ERRCODE = 'lock_not_available',
                    HINT = 'Wait for it to finish, or close the other console.';
    END IF;
    IF v_holder IS NULL THEN
        -- A fresh key nobody can have taken in advance; a key someone holds is skipped.
        FOR i IN 1..20 LOOP
            v_key := (floor(random() * 4294967296) - 2147483648)::integer;
            EXIT WHEN pg_try_advisory_lock(redrive.bulk_run_lock_class(), v_key);
            v_key := NULL;
        END LOOP;
        IF v_key IS NULL THEN
            RAISE EXCEPTION 'no free run lock for bulk action %', p_bulk_id
                  USING ERRCODE = 'lock_not_available';
        END IF;
        UPDATE redrive.bulk_operation b SET run_pid = pg_backend_pid(), run_key = v_key
         WHERE b.bulk_id = p_bulk_id;
    END IF;
    RETURN QUERY
    SELECT v_bulk.bulk_id, v_bulk.action, v_bulk.os_user, v_bulk.targets, v_bulk.target_count,
           v_bulk.chunk_size, v_bulk.params, v_bulk.reason, v_bulk.ticket,
           coalesce(array_agg(o.chunk_no ORDER BY o.chunk_no), '{}'),
           coalesce(sum((o.outcome ->> 'applied')::integer), 0)::integer,
           coalesce(sum((o.outcome ->> 'conflicts')::integer), 0)::integer,
           coalesce(sum((o.outcome ->> 'refused')::integer), 0)::integer
      FROM redrive.operator_action o
     WHERE o.bulk_id = p_bulk_id AND o.outcome IS NOT NULL;
END
$$;

-- Gives back the run lock this session holds on p_bulk_id (any role: it frees only this
-- session's own run). True when it held it.
CREATE OR REPLACE FUNCTION redrive.end_bulk_run(p_bulk_id uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_key integer;
BEGIN
    IF redrive.bulk_run_holder(p_bulk_id) IS DISTINCT FROM pg_backend_pid() THEN
        RETURN false;
    END IF;
    SELECT b.run_key INTO v_key FROM redrive.bulk_operation b
     WHERE b.bulk_id = p_bulk_id AND b.run_pid = pg_backend_pid() FOR UPDATE;
    IF v_key IS NULL THEN
        RETURN false;
    END IF;
    UPDATE redrive.bulk_operation b SET run_pid = NULL, run_key = NULL
     WHERE b.bulk_id = p_bulk_id;
    RETURN pg_advisory_unlock(redrive.bulk_run_lock_class(), v_key);
END
$$;

-- As in version 15, with the run decided by bulk_run_holder() under the row lock instead of a
-- lock on the bulk's hash that anyone could hold.
CREATE OR REPLACE FUNCTION redrive.take_over_bulk(p_action_id uuid, p_bulk_id uuid,
                                                  p_expected_actor text, p_reason text,
                                                  p_ticket text DEFAULT NULL,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_prev jsonb;
    v_bulk redrive.bulk_operation%ROWTYPE;
    v_done integer;
    v_target jsonb := jsonb_build_array(jsonb_build_object('type', 'bulk', 'id', p_bulk_id));
BEGIN
    SELECT * INTO v_bulk FROM redrive.bulk_operation WHERE bulk_id = p_bulk_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no bulk action %', p_bulk_id USING ERRCODE = 'no_data_found';
    END IF;
    PERFORM redrive.require_role(redrive.bulk_roles(v_bulk.action));
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.begin_action(p_action_id, 'take_over_bulk', p_os_user, NULL,
                                   jsonb_build_object('bulk_id', p_bulk_id,
                                                      'expected_actor', p_expected_actor,
                                                      'reason', p_reason, 'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    IF v_bulk.actor = session_user THEN
        RAISE EXCEPTION 'bulk action % is already yours', p_bulk_id
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_bulk.abandoned_at IS NOT NULL THEN
        RAISE EXCEPTION 'bulk action % was abandoned by % at %', p_bulk_id, v_bulk.abandoned_by,
                        v_bulk.abandoned_at
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    SELECT count(*) INTO v_done FROM redrive.operator_action
     WHERE bulk_id = p_bulk_id AND outcome IS NOT NULL;
    IF v_done * v_bulk.chunk_size >= v_bulk.target_count THEN
        RAISE EXCEPTION 'bulk action % is finished: nothing to take over', p_bulk_id
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF redrive.bulk_run_holder(p_bulk_id) IS NOT NULL THEN
        RAISE EXCEPTION 'bulk action % is being run in another session', p_bulk_id
              USING ERRCODE = 'lock_not_available',
                    HINT = 'Its owner''s console is still running it.';
    END IF;
    IF v_bulk.actor IS DISTINCT FROM p_expected_actor THEN
        RETURN redrive.finish_action(
            p_action_id, 'take_over_bulk',
            jsonb_build_array(v_target -> 0 || '{"result": "conflict"}'), p_reason, p_ticket,
            p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'bulk_id', p_bulk_id,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', p_bulk_id, 'result', 'conflict',
                                   'actor', v_bulk.actor))));
    END IF;
    UPDATE redrive.bulk_operation SET actor = session_user, os_user = p_os_user
     WHERE bulk_id = p_bulk_id;
    RETURN redrive.finish_action(
        p_action_id, 'take_over_bulk', v_target, p_reason, p_ticket, p_os_user,
        jsonb_build_object('actor', v_bulk.actor, 'os_user', v_bulk.os_user),
        jsonb_build_object('actor', session_user, 'os_user', p_os_user),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'bulk_id', p_bulk_id, 'chunks_done', v_done));
END
$$;

-- As in version 15, with the run decided by bulk_run_holder() (see take_over_bulk).
CREATE OR REPLACE FUNCTION redrive.abandon_bulk(p_action_id uuid, p_bulk_id uuid, p_reason text,
                                                p_ticket text DEFAULT NULL,
                                                p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_prev jsonb;
    v_bulk redrive.bulk_operation%ROWTYPE;
    v_done integer;
    v_holder integer;
BEGIN
    SELECT * INTO v_bulk FROM redrive.bulk_operation WHERE bulk_id = p_bulk_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no bulk action %', p_bulk_id USING ERRCODE = 'no_data_found';
    END IF;
    PERFORM redrive.require_role(redrive.bulk_roles(v_bulk.action));
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.begin_action(p_action_id, 'abandon_bulk', p_os_user, NULL,
                                   jsonb_build_object('bulk_id', p_bulk_id, 'reason', p_reason,
                                                      'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    IF v_bulk.actor <> session_user THEN
        RAISE EXCEPTION 'bulk action % belongs to %; only its owner gives it up', p_bulk_id,
                        v_bulk.actor
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF v_bulk.abandoned_at IS NOT NULL THEN
        RAISE EXCEPTION 'bulk action % was already abandoned', p_bulk_id
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    v_holder := redrive.bulk_run_holder(p_bulk_id);
    IF v_holder IS NOT NULL AND v_holder <> pg_backend_pid() THEN
        RAISE EXCEPTION 'bulk action % is being run in another session', p_bulk_id
              USING ERRCODE = 'lock_not_available';
    END IF;
    SELECT count(*) INTO v_done FROM redrive.operator_action
     WHERE bulk_id = p_bulk_id AND outcome IS NOT NULL;
    UPDATE redrive.bulk_operation SET abandoned_at = clock_timestamp(), abandoned_by = session_user
     WHERE bulk_id = p_bulk_id;
    RETURN redrive.finish_action(
        p_action_id, 'abandon_bulk',
        jsonb_build_array(jsonb_build_object('type', 'bulk', 'id', p_bulk_id)), p_reason,
        p_ticket, p_os_user, jsonb_build_object('abandoned_at', NULL),
        jsonb_build_object('abandoned_at', clock_timestamp(), 'chunks_done', v_done),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'bulk_id', p_bulk_id, 'chunks_done', v_done));
END
$$;

-- bulk_run_holder now reads bulk_operation as its owner: still only for the console roles.
REVOKE ALL ON FUNCTION redrive.bulk_run_holder(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.bulk_run_holder(uuid)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
