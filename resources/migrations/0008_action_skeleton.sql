-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 8: one action skeleton for the source adapters
-- (docs/architecture.md, "Source adapters"). The action protocol of a source's dead letters --
-- role and reason, option checks, the bound action id, the per-target verdict against the version
-- the operator saw, Redrive's own bookkeeping in redrive.source_job, the audit entry with every
-- target and its result, the outcome -- lives here once. An adapter supplies only how to lock and
-- read its queue's rows (a lock function returning redrive.source_target rows) and how to change
-- them (an apply function), both named by the adapter's action functions and looked up in the
-- adapter's own schema. A fix to the action semantics of every source is made here.

-- ---------------------------------------------------------------------------------------------
-- One target of a source action as the adapter's lock function reports it, locked.
CREATE TYPE redrive.source_target AS (
    id           bigint,      -- the dead letter's id, as the operator named it
    seen_version integer,     -- the version the operator saw
    version      integer,     -- its version now; NULL: no such dead letter in this source
    job_ref      text,        -- the queue's id of the job
    status       text,        -- the read contract's status: open, requeued, resolved
    job_state    text,        -- the queue's own word for the job's state, for details only
    held_by      text,        -- the worker that holds the job now; NULL when none does
    held_since   timestamptz, -- since when it holds it; NULL: the job is not held
    stuck_at     timestamptz, -- from when the hold counts as stuck (its worker presumed dead)
    payload      jsonb,       -- the job's payload (edit_and_requeue's audit "before")
    before       jsonb,       -- what the audit entry keeps of the target before the action
    job          jsonb        -- whatever else the adapter's apply function needs
);

-- The callback p_fn of source p_source as "schema"."name", quoted; raises unless it lives in the
-- source's own schema (an action never runs a function from anywhere else). Only the name goes
-- into SQL text, never a value.
CREATE FUNCTION redrive.source_callback(p_source text, p_fn regprocedure) RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_name text;
BEGIN
    SELECT format('%I.%I', n.nspname, p.proname) INTO v_name
      FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      JOIN redrive.source s ON s.schema_name = n.nspname
     WHERE p.oid = p_fn AND s.name = p_source;
    IF v_name IS NULL THEN
        RAISE EXCEPTION 'function % is not one of source %''s own functions', p_fn, p_source
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN v_name;
END
$$;

-- The verdict on one target of a source action, and why (NULL detail: applied or not found).
-- The rules, the same for every source (docs/architecture.md, "Source adapters"):
--   * not_found: the source has no such dead letter;
--   * conflict: its version is not the one the operator saw; or, for requeue, edit_and_requeue
--     and resolve, it is no longer open; or, for release_stuck, no worker holds it any more;
--   * refused: requeue, edit_and_requeue and resolve of a job a worker holds (release it first);
--     release_stuck of a job held for less than the source's stuck threshold (its worker may be
--     alive);
--   * applied otherwise. claim and unclaim look at the version only.
CREATE FUNCTION redrive.source_target_verdict(p_action text, t redrive.source_target,
                                              OUT result text, OUT detail text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT v.result,
           CASE v.result
               WHEN 'conflict' THEN
                   format('now %s (queue state %s) at version %s (you saw version %s)',
                          t.status, t.job_state, t.version, t.seen_version)
               WHEN 'refused' THEN
                   CASE WHEN p_action = 'release_stuck'
                        THEN format('worker %s took the job at %s, less than %s ago: it may be '
                                    'alive', t.held_by, t.held_since, t.stuck_at - t.held_since)
                        ELSE format('worker %s holds the job since %s: release it first',
                                    t.held_by, t.held_since) END
           END
      FROM (SELECT CASE
                WHEN t.version IS NULL THEN 'not_found'
                WHEN t.version <> t.seen_version THEN 'conflict'
                WHEN p_action IN ('requeue', 'edit_and_requeue', 'resolve')
                     AND t.status IS DISTINCT FROM 'open' THEN 'conflict'
                WHEN p_action = 'release_stuck' AND t.held_since IS NULL THEN 'conflict'
                WHEN p_action IN ('requeue', 'edit_and_requeue', 'resolve')
                     AND t.held_since IS NOT NULL THEN 'refused'
                WHEN p_action = 'release_stuck' AND NOT coalesce(t.stuck_at < now(), false)
                THEN 'refused'
                ELSE 'applied' END AS result) v
$$;

-- Runs one action on dead letters of source p_source, in the caller's transaction, and returns
-- its outcome (as the native action functions do: confirmed, applied, conflicts (conflict and
-- not_found), refused, "results" for every target not applied, with why (an edit's one target
-- even when applied, as the native edit_and_requeue lists it); bulk_id and chunk_no for
-- the bulk actions requeue and resolve). p_action: requeue, edit_and_requeue, resolve, claim,
-- unclaim, release_stuck; NULL for a claim call that did not say whether to claim or release
-- (refused once the caller's roles and reason are checked). p_params: the action's options exactly as begin_action binds them
-- (reason and ticket included; reset_attempts for a requeue, payload for an edit, resolution and
-- note for a resolve). p_lock(p_targets jsonb, p_action text) RETURNS SETOF redrive.source_target
-- locks the targets (Redrive's rows, then the queue's, in id order) and reads them; p_apply
-- (rows redrive.source_target[], p_action text, p_params jsonb), NULL for none, changes the
-- queue's rows of the applied targets; both must be functions of the source's own schema.
-- p_via, when given, names in the audit entry how the queue was changed.
-- Checks the caller's roles (session_user): requeue and edit_and_requeue need redrive_oncall,
-- the others redrive_oncall or redrive_support.
CREATE FUNCTION redrive.run_source_action(p_source text, p_action text, p_action_id uuid,
                                          p_targets jsonb, p_params jsonb, p_reason text,
                                          p_ticket text, p_os_user text, p_bulk_id uuid,
                                          p_chunk_no integer, p_lock regprocedure,
                                          p_apply regprocedure, p_via text)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_lock text;
    v_apply text;
    v_rows redrive.source_target[];
    v_all jsonb;
    v_applied redrive.source_target[];
    v_ids bigint[];
    v_conflicts integer;
    v_refused integer;
    v_before jsonb;
    v_after jsonb;
    v_outcome jsonb;
    v_now timestamptz := clock_timestamp();
    v_reset boolean := (p_params ->> 'reset_attempts')::boolean;
BEGIN
    IF p_action IN ('requeue', 'edit_and_requeue') THEN
        PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    ELSIF p_action IN ('resolve', 'claim', 'unclaim', 'release_stuck') OR p_action IS NULL THEN
        PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    ELSE
        RAISE EXCEPTION 'no source action %', p_action USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM redrive.require_reason(p_reason);
    IF p_action IS NULL THEN
        RAISE EXCEPTION 'say whether to claim or release' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF p_action IN ('requeue', 'edit_and_requeue') AND v_reset IS NULL THEN
        RAISE EXCEPTION 'say whether the attempt counter is reset'
              USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF p_action = 'edit_and_requeue'
       AND coalesce(jsonb_typeof(p_params -> 'payload'), 'null') NOT IN ('object', 'array') THEN
        RAISE EXCEPTION 'the edited payload must be a JSON object or array'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_action = 'resolve' AND coalesce(p_params ->> 'resolution', '')
                                NOT IN ('fixed_by_hand', 'duplicate', 'not_needed') THEN
        RAISE EXCEPTION 'resolution must be fixed_by_hand, duplicate or not_needed'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_lock := redrive.source_callback(p_source, p_lock);
    IF p_apply IS NOT NULL THEN
        v_apply := redrive.source_callback(p_source, p_apply);
    END IF;

    v_prev := redrive.begin_action(p_action_id, p_action, p_os_user, p_targets, p_params,
                                   p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;

    EXECUTE format('SELECT coalesce(array_agg(t ORDER BY t.id), ''{}'') FROM %s($1, $2) t',
                   v_lock)
       INTO v_rows USING p_targets, p_action;
    WITH c AS (SELECT t, v.result, v.detail
                 FROM unnest(v_rows) t, redrive.source_target_verdict(p_action, t) v)
    SELECT jsonb_agg(jsonb_build_object('id', (c.t).id, 'version', (c.t).seen_version,
                                        'result', c.result, 'detail', c.detail,
                                        'job_ref', (c.t).job_ref) ORDER BY (c.t).id),
           coalesce(array_agg(c.t ORDER BY (c.t).id) FILTER (WHERE c.result = 'applied'), '{}'),
           count(*) FILTER (WHERE c.result IN ('conflict', 'not_found')),
           count(*) FILTER (WHERE c.result = 'refused')
      INTO v_all, v_applied, v_conflicts, v_refused
      FROM c;
    SELECT coalesce(array_agg(a.id), '{}') INTO v_ids FROM unnest(v_applied) a;

    -- The queue's side, then Redrive's.
    IF v_apply IS NOT NULL AND cardinality(v_applied) > 0 THEN
        EXECUTE format('SELECT %s($1, $2, $3)', v_apply) USING v_applied, p_action, p_params;
    END IF;
    UPDATE redrive.source_job s
       SET version = s.version + 1, updated_at = v_now,
           requeued_by = CASE WHEN p_action IN ('requeue', 'edit_and_requeue') THEN session_user
                              ELSE s.requeued_by END,
           requeued_at = CASE WHEN p_action IN ('requeue', 'edit_and_requeue') THEN v_now
                              ELSE s.requeued_at END,
           succeeded_at = CASE WHEN p_action IN ('requeue', 'edit_and_requeue') THEN NULL
                               ELSE s.succeeded_at END,
           resolution = CASE WHEN p_action = 'resolve' THEN p_params ->> 'resolution'
                             ELSE s.resolution END,
           resolution_note = CASE WHEN p_action = 'resolve' THEN p_params ->> 'note'
                                  ELSE s.resolution_note END,
           resolved_by = CASE WHEN p_action = 'resolve' THEN session_user ELSE s.resolved_by END,
           resolved_at = CASE WHEN p_action = 'resolve' THEN v_now ELSE s.resolved_at END,
           claimed_by = CASE WHEN p_action = 'claim' THEN session_user
                             WHEN p_action = 'unclaim' THEN NULL ELSE s.claimed_by END,
           claimed_at = CASE WHEN p_action = 'claim' THEN v_now
                             WHEN p_action = 'unclaim' THEN NULL ELSE s.claimed_at END
     WHERE s.source = p_source AND s.id IN (SELECT unnest(v_ids));

    -- What the audit entry keeps.
    IF p_action = 'edit_and_requeue' THEN
        IF cardinality(v_applied) > 0 THEN
            v_before := jsonb_build_object('payload', (v_applied[1]).payload);
            v_after := jsonb_build_object('payload', p_params -> 'payload');
        END IF;
    ELSE
        IF p_action IN ('requeue', 'release_stuck') THEN
            SELECT coalesce(jsonb_agg(a.before ORDER BY a.id), '[]') INTO v_before
              FROM unnest(v_applied) a;
        END IF;
        v_after := CASE p_action
            WHEN 'requeue' THEN jsonb_build_object('status', 'requeued', 'reset_attempts', v_reset)
            WHEN 'resolve' THEN jsonb_build_object('status', 'resolved',
                                                   'resolution', p_params ->> 'resolution',
                                                   'note', p_params ->> 'note')
            WHEN 'claim' THEN jsonb_build_object('claimed_by', session_user)
            WHEN 'unclaim' THEN jsonb_build_object('claimed_by', NULL)
            WHEN 'release_stuck' THEN jsonb_build_object('locked_by', NULL) END;
        IF p_action NOT IN ('claim', 'unclaim') THEN
            v_after := v_after || jsonb_build_object('source', p_source);
        END IF;
        IF p_via IS NOT NULL THEN
            v_after := v_after || jsonb_build_object('via', p_via);
        END IF;
    END IF;
    v_outcome := jsonb_build_object(
        'confirmed', jsonb_array_length(p_targets), 'applied', cardinality(v_applied),
        'conflicts', v_conflicts, 'refused', v_refused,
        'results', (SELECT coalesce(jsonb_agg(r - 'version' - 'job_ref'), '[]')
                      FROM jsonb_array_elements(v_all) r
                     WHERE r ->> 'result' <> 'applied' OR p_action = 'edit_and_requeue'));
    IF p_action IN ('requeue', 'resolve') THEN
        v_outcome := v_outcome || jsonb_build_object('bulk_id', p_bulk_id, 'chunk_no', p_chunk_no);
    END IF;
    RETURN redrive.finish_action(
        p_action_id, p_action,
        (SELECT jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', r -> 'id',
                                             'version', r -> 'version', 'result', r -> 'result',
                                             'source', p_source, 'job_ref', r -> 'job_ref')
                          ORDER BY (r ->> 'id')::bigint)
           FROM jsonb_array_elements(v_all) r),
        p_reason, p_ticket, p_os_user, v_before, v_after, v_outcome);
END
$$;

-- Not granted: only the adapters' SECURITY DEFINER action functions call them.
REVOKE ALL ON FUNCTION
    redrive.source_callback(text, regprocedure),
    redrive.source_target_verdict(text, redrive.source_target),
    redrive.run_source_action(text, text, uuid, jsonb, jsonb, text, text, text, uuid, integer,
                              regprocedure, regprocedure, text)
    FROM PUBLIC;
