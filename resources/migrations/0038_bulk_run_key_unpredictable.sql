-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 38: a bulk's run-lock key nobody can predict
-- (docs/security.md, "Nobody else holds a bulk's run lock").
--
-- Since version 23 begin_bulk_run took its advisory key from random(), whose sequence
-- setseed() fixes for the session; code a queue's application planted in a confined call the
-- operator's session made (docs/security.md, "The queue's own role") could call setseed(), which
-- no setting shows and RESET ALL does not undo, and the application, holding the 20 keys that
-- seed gives in a session of its own, kept the operator's bulk from starting ("no free run lock").
-- The key now comes from gen_random_uuid() (the server's strong random source). The rest of the
-- function is as in version 23.

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
            -- 32 random bits of a version 4 UUID (its first 8 hex digits): from the server's
            -- strong random source, which setseed() does not touch.
            v_key := ('x' || pg_catalog.left(pg_catalog.gen_random_uuid()::text, 8))::bit(32)
                         ::integer;
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

