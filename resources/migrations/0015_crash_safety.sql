-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 15: nothing a crash leaves behind is hidden or lost
-- (docs/reliability.md).
--   * A bulk action outlives the console session that started it: every operator sees the
--     unfinished ones with their progress (bulk_action_list); the owner resumes one from any
--     session, one session at a time (begin_bulk_run); another operator with the role the
--     bulk's action needs takes one over, under audit (take_over_bulk); the owner gives one up,
--     under audit (abandon_bulk). Each chunk is still applied at most once (version 7).
--   * Jobs whose lease expired are listed whatever their idempotency key, with the worker that
--     held them and for how long (expired_lease_list).
--   * A heartbeat never shortens a lease: a worker whose clock stepped back cannot hand its live
--     job to another worker by renewing it into the past.

-- ---------------------------------------------------------------------------------------------
-- Bulk actions: who runs them now, and whether they were given up.
ALTER TABLE redrive.bulk_operation ADD COLUMN abandoned_at timestamptz;
ALTER TABLE redrive.bulk_operation ADD COLUMN abandoned_by text;
COMMENT ON COLUMN redrive.bulk_operation.actor IS
    'The login that runs the chunks: the one that froze the list, or the one that took it over';

-- The run lock of a bulk: a session-level advisory lock on (kBulkRunLockClass, hash of the id),
-- held by the one console session running its chunks. It goes with the session (a killed
-- backend or a closed console frees it at once), so a crashed bulk is never left locked.
CREATE FUNCTION redrive.bulk_run_lock_key(p_bulk_id uuid) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN hashtext(p_bulk_id::text);

CREATE FUNCTION redrive.bulk_run_lock_class() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN 1380209218; -- 'RDRB'

-- Whether some session holds the run lock of p_bulk_id, and whether it is this one.
CREATE FUNCTION redrive.bulk_run_holder(p_bulk_id uuid) RETURNS integer
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT l.pid FROM pg_catalog.pg_locks l
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
           AND l.database = (SELECT oid FROM pg_catalog.pg_database
                              WHERE datname = current_database())
           AND l.classid = redrive.bulk_run_lock_class()::oid
           AND l.objid = (redrive.bulk_run_lock_key(p_bulk_id)::bigint & 4294967295)::oid
         LIMIT 1);

-- Every bulk action with its progress: chunks done (each applied at most once, by chunk
-- number), the targets applied, in conflict and refused so far, when the last chunk ran, and
-- whether a session is running it now. finished: every chunk done; abandoned: given up.
CREATE VIEW redrive.bulk_action_list AS
SELECT b.bulk_id, b.action, b.actor, b.os_user, b.target_count, b.chunk_size,
       ((b.target_count + b.chunk_size - 1) / b.chunk_size) AS chunk_count,
       coalesce(p.chunks_done, 0) AS chunks_done, coalesce(p.applied, 0) AS applied,
       coalesce(p.conflicts, 0) AS conflicts, coalesce(p.refused, 0) AS refused,
       b.reason, b.ticket, b.created_at, p.last_chunk_at, b.abandoned_at, b.abandoned_by,
       (redrive.bulk_run_holder(b.bulk_id) IS NOT NULL) AS running,
       (coalesce(p.chunks_done, 0) >= (b.target_count + b.chunk_size - 1) / b.chunk_size)
           AS finished
  FROM redrive.bulk_operation b
  LEFT JOIN LATERAL (
        SELECT count(*)::integer AS chunks_done,
               sum((o.outcome ->> 'applied')::integer)::integer AS applied,
               sum((o.outcome ->> 'conflicts')::integer)::integer AS conflicts,
               sum((o.outcome ->> 'refused')::integer)::integer AS refused,
               max(a.at) AS last_chunk_at
          FROM redrive.operator_action o
          LEFT JOIN redrive.audit_log a ON a.id = o.audit_id
         WHERE o.bulk_id = b.bulk_id AND o.outcome IS NOT NULL) p ON true;
COMMENT ON VIEW redrive.bulk_action_list IS
    'Bulk actions with their progress; unfinished ones can be resumed by their actor (docs/reliability.md)';
GRANT SELECT ON redrive.bulk_action_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- The roles that may run a bulk of p_action (as the action functions require them).
CREATE FUNCTION redrive.bulk_roles(p_action text) RETURNS text[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE p_action WHEN 'requeue' THEN ARRAY['redrive_oncall']
                     ELSE ARRAY['redrive_oncall', 'redrive_support'] END;

-- A chunk is applied only while its bulk is not abandoned, and only by the bulk's actor at the
-- moment it is applied: the row is share-locked, so a take-over waits for a chunk in flight and
-- a chunk after a take-over sees the new actor. (begin_action checks the actor too, but
-- without a lock; this closes the window between its check and the chunk's commit.)
CREATE FUNCTION redrive.operator_action_bulk_guard() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bulk redrive.bulk_operation%ROWTYPE;
BEGIN
    IF NEW.bulk_id IS NULL THEN
        RETURN NEW;
    END IF;
    SELECT * INTO v_bulk FROM redrive.bulk_operation WHERE bulk_id = NEW.bulk_id FOR SHARE;
    IF v_bulk.abandoned_at IS NOT NULL THEN
        RAISE EXCEPTION 'bulk action % was abandoned by % at %', NEW.bulk_id, v_bulk.abandoned_by,
                        v_bulk.abandoned_at
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF v_bulk.actor <> session_user THEN
        RAISE EXCEPTION 'bulk action % belongs to %; only its owner runs its chunks',
                        NEW.bulk_id, v_bulk.actor
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER operator_action_bulk_guard BEFORE INSERT ON redrive.operator_action
    FOR EACH ROW WHEN (NEW.bulk_id IS NOT NULL) EXECUTE FUNCTION redrive.operator_action_bulk_guard();

-- Starts running bulk p_bulk_id in this session (roles: those of its action; the caller must be
-- its actor): takes its run lock, so a second session resuming the same bulk is refused
-- (lock_not_available) instead of racing it, and returns the frozen list with the chunks already
-- done, so the caller runs only the others. Calling it again in the same session is harmless.
CREATE FUNCTION redrive.begin_bulk_run(p_bulk_id uuid)
RETURNS TABLE (bulk_id uuid, action text, os_user text, targets jsonb, target_count integer,
               chunk_size integer, params jsonb, reason text, ticket text,
               chunks_done integer[], applied integer, conflicts integer, refused integer)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bulk redrive.bulk_operation%ROWTYPE;
BEGIN
    SELECT * INTO v_bulk FROM redrive.bulk_operation b WHERE b.bulk_id = p_bulk_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no bulk action %', p_bulk_id USING ERRCODE = 'no_data_found';
    END IF;
    PERFORM redrive.require_role(redrive.bulk_roles(v_bulk.action));
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
    IF redrive.bulk_run_holder(p_bulk_id) IS DISTINCT FROM pg_backend_pid() THEN
        IF NOT pg_try_advisory_lock(redrive.bulk_run_lock_class(),
                                    redrive.bulk_run_lock_key(p_bulk_id)) THEN
            RAISE EXCEPTION 'bulk action % is being run in another session', p_bulk_id
                  USING ERRCODE = 'lock_not_available',
                        HINT = 'Wait for it to finish, or close the other console.';
        END IF;
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
-- session's own lock). True when it held it.
CREATE FUNCTION redrive.end_bulk_run(p_bulk_id uuid) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF redrive.bulk_run_holder(p_bulk_id) IS DISTINCT FROM pg_backend_pid() THEN
        RETURN false;
    END IF;
    RETURN pg_advisory_unlock(redrive.bulk_run_lock_class(), redrive.bulk_run_lock_key(p_bulk_id));
END
$$;

-- Takes over another operator's unfinished bulk action (roles: those of its action, e.g.
-- oncall for a requeue). p_expected_actor is the owner the operator saw: if it changed since,
-- the outcome is a conflict and nothing changes. Refused while a session runs it, once it is
-- finished or abandoned, and for its own owner. The audit entry names the bulk with the owner
-- before and after; the chunks then run as the new owner, under their own audit entries.
CREATE FUNCTION redrive.take_over_bulk(p_action_id uuid, p_bulk_id uuid, p_expected_actor text,
                                       p_reason text, p_ticket text DEFAULT NULL,
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
    IF NOT pg_try_advisory_xact_lock(redrive.bulk_run_lock_class(),
                                     redrive.bulk_run_lock_key(p_bulk_id)) THEN
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

-- Gives up an unfinished bulk action (its owner, with the roles of its action): its remaining
-- chunks are never applied, and it leaves the list of unfinished ones. Refused while a session
-- runs it. Audited with the chunks done.
CREATE FUNCTION redrive.abandon_bulk(p_action_id uuid, p_bulk_id uuid, p_reason text,
                                     p_ticket text DEFAULT NULL, p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_prev jsonb;
    v_bulk redrive.bulk_operation%ROWTYPE;
    v_done integer;
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
    IF redrive.bulk_run_holder(p_bulk_id) IS DISTINCT FROM pg_backend_pid()
       AND NOT pg_try_advisory_xact_lock(redrive.bulk_run_lock_class(),
                                         redrive.bulk_run_lock_key(p_bulk_id)) THEN
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

REVOKE ALL ON FUNCTION redrive.bulk_run_holder(uuid), redrive.bulk_roles(text),
                       redrive.operator_action_bulk_guard(),
                       redrive.begin_bulk_run(uuid), redrive.end_bulk_run(uuid),
                       redrive.take_over_bulk(uuid, uuid, text, text, text, text),
                       redrive.abandon_bulk(uuid, uuid, text, text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.bulk_run_holder(uuid)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
GRANT EXECUTE ON FUNCTION redrive.begin_bulk_run(uuid), redrive.end_bulk_run(uuid),
                          redrive.take_over_bulk(uuid, uuid, text, text, text, text),
                          redrive.abandon_bulk(uuid, uuid, text, text, text)
    TO redrive_oncall, redrive_support;

-- ---------------------------------------------------------------------------------------------
-- Jobs whose lease expired: running, held by a worker that stopped renewing it. Listed whatever
-- their idempotency key (a job without one has no key record to show it), with the worker, the
-- attempt it was on, and how long ago the lease ran out by the server's clock.
CREATE VIEW redrive.expired_lease_list AS
SELECT j.id AS job_id, j.queue, j.kind, j.locked_by AS worker_id, j.attempt, j.max_attempts,
       j.locked_until, j.heartbeat_at, j.idempotency_key, j.updated_at,
       extract(epoch FROM (clock_timestamp() - j.locked_until))::bigint AS expired_seconds
  FROM redrive.job j
 WHERE j.state = 'running' AND j.locked_until < clock_timestamp();
COMMENT ON VIEW redrive.expired_lease_list IS
    'Running jobs whose lease expired: their worker died or hung (docs/reliability.md)';
GRANT SELECT ON redrive.expired_lease_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- ---------------------------------------------------------------------------------------------
-- A heartbeat extends a lease and never shortens it: a "now" from a worker whose clock stepped
-- back would otherwise renew its live job into the past, where reclaim_expired_leases hands it
-- to another worker while the first one still runs it. (Version 7's bound on a later "now"
-- stays: a lease ends at most a minute plus p_lease_ms past the server clock.)
CREATE OR REPLACE FUNCTION redrive.heartbeat_job(p_job bigint, p_worker text, p_lease_ms integer,
                                      p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := least(coalesce(p_now, clock_timestamp()), clock_timestamp() + interval '1 minute');
    v_until timestamptz := v_now + p_lease_ms * interval '1 millisecond';
BEGIN
    UPDATE redrive.job
       SET locked_until = greatest(locked_until, v_until),
           heartbeat_at = greatest(heartbeat_at, v_now)
     WHERE id = p_job AND state = 'running' AND locked_by = p_worker
       AND (locked_login IS NULL OR locked_login = session_user);
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE redrive.idempotency_key
       SET locked_until = greatest(locked_until, v_until)
     WHERE job_id = p_job AND locked_by = p_worker AND state = 'processing'
       AND (locked_login IS NULL OR locked_login = session_user);
    RETURN true;
END
$$;
