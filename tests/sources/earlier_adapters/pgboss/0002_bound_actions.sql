-- The pg-boss adapter, version 2: its actions take bound action ids (docs/security.md). Each
-- action starts with redrive.begin_action, which checks every target carries a version, caps
-- the targets of one call, checks a bulk chunk against its owner and frozen list, and binds the
-- action id to the caller, the action and a digest of its parameters. The bodies are otherwise
-- those of version 1; redrive.finish_action now names every target with its result.

CREATE OR REPLACE FUNCTION redrive_pgboss.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
                                                    p_reset_attempts boolean, p_reason text,
                                                    p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL,
                                                    p_bulk_id uuid DEFAULT NULL,
                                                    p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_applied bigint[];
    v_targets jsonb;
    v_before jsonb;
    v_results jsonb;
    v_conflicts integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.begin_action(
        p_action_id, 'requeue', p_os_user,
        p_targets,
        jsonb_build_object('reset_attempts', p_reset_attempts, 'reason', p_reason,
                           'ticket', p_ticket),
        p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    WITH c AS (SELECT t.*, CASE WHEN t.version IS NULL THEN 'not_found'
                                WHEN t.version <> t.seen_version OR t.status <> 'open'
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_pgboss.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version, 'source', 'pgboss',
                                                 'job_ref', c.job_ref) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'status', c.status,
                                                 'job_state', c.job_state,
                                                 'retry_count', c.retry_count,
                                                 'retry_limit', c.retry_limit) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object(
                        'id', c.id, 'result', c.result,
                        'detail', CASE WHEN c.result = 'conflict'
                                       THEN format('now %s (pg-boss state %s) at version %s '
                                                   '(you saw version %s)', c.status,
                                                   c.job_state, c.version, c.seen_version) END)
                        ORDER BY c.id) FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_applied, v_targets, v_before, v_results, v_conflicts
      FROM c;

    -- pg-boss 10 retryJobs (src/plans.js), for the applied targets.
    UPDATE pgboss.job j
       SET state = 'retry',
           retry_limit = CASE WHEN p_reset_attempts THEN j.retry_limit ELSE j.retry_limit + 1 END,
           retry_count = CASE WHEN p_reset_attempts THEN 0 ELSE j.retry_count END,
           started_on = CASE WHEN p_reset_attempts THEN NULL ELSE j.started_on END
      FROM redrive.source_job s
     WHERE s.id IN (SELECT unnest(v_applied)) AND s.source = 'pgboss'
       AND j.name = s.queue AND j.id = s.job_ref::uuid AND j.state = 'failed';
    UPDATE redrive.source_job
       SET version = version + 1, requeued_by = session_user, requeued_at = clock_timestamp(),
           succeeded_at = NULL, updated_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));

    RETURN redrive.finish_action(
        p_action_id, 'requeue', v_targets, p_reason, p_ticket, p_os_user, v_before,
        jsonb_build_object('status', 'requeued', 'reset_attempts', p_reset_attempts,
                           'source', 'pgboss', 'via', 'pg-boss retry(): state retry'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

CREATE OR REPLACE FUNCTION redrive_pgboss.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
                                                p_version integer, p_payload jsonb,
                                                p_reset_attempts boolean, p_reason text,
                                                p_ticket text DEFAULT NULL,
                                                p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    d record;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    IF p_payload IS NULL OR jsonb_typeof(p_payload) NOT IN ('object', 'array') THEN
        RAISE EXCEPTION 'the edited payload must be a JSON object or array'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'edit_and_requeue', p_os_user,
        jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)),
        jsonb_build_object('payload', p_payload, 'reset_attempts', p_reset_attempts,
                           'reason', p_reason, 'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO d FROM redrive_pgboss.lock_targets(
        jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)));
    IF d.version IS NULL OR d.version <> p_version OR d.status <> 'open' THEN
        RETURN redrive.finish_action(
            p_action_id, 'edit_and_requeue', '[]', p_reason, p_ticket, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', p_dead_letter, 'result', 'conflict'))));
    END IF;
    UPDATE pgboss.job j
       SET data = p_payload, state = 'retry',
           retry_limit = CASE WHEN p_reset_attempts THEN j.retry_limit ELSE j.retry_limit + 1 END,
           retry_count = CASE WHEN p_reset_attempts THEN 0 ELSE j.retry_count END,
           started_on = CASE WHEN p_reset_attempts THEN NULL ELSE j.started_on END
     WHERE j.name = d.queue AND j.id = d.job_ref::uuid AND j.state = 'failed';
    UPDATE redrive.source_job
       SET version = version + 1, requeued_by = session_user, requeued_at = clock_timestamp(),
           succeeded_at = NULL, updated_at = clock_timestamp()
     WHERE id = d.id;
    RETURN redrive.finish_action(
        p_action_id, 'edit_and_requeue',
        jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', d.id,
                                             'version', d.version, 'source', 'pgboss',
                                             'job_ref', d.job_ref)),
        p_reason, p_ticket, p_os_user, jsonb_build_object('payload', d.data),
        jsonb_build_object('payload', p_payload),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', d.id, 'result', 'applied'))));
END
$$;

CREATE OR REPLACE FUNCTION redrive_pgboss.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
                                                    p_resolution text, p_note text,
                                                    p_reason text, p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL,
                                                    p_bulk_id uuid DEFAULT NULL,
                                                    p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_applied bigint[];
    v_targets jsonb;
    v_results jsonb;
    v_conflicts integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    IF p_resolution IS NULL OR p_resolution NOT IN ('fixed_by_hand', 'duplicate', 'not_needed') THEN
        RAISE EXCEPTION 'resolution must be fixed_by_hand, duplicate or not_needed'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'resolve', p_os_user,
        p_targets,
        jsonb_build_object('resolution', p_resolution, 'note', p_note,
                           'reason', p_reason, 'ticket', p_ticket),
        p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    WITH c AS (SELECT t.*, CASE WHEN t.version IS NULL THEN 'not_found'
                                WHEN t.version <> t.seen_version OR t.status <> 'open'
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_pgboss.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version, 'source', 'pgboss',
                                                 'job_ref', c.job_ref) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'result', c.result) ORDER BY c.id)
                        FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_applied, v_targets, v_results, v_conflicts
      FROM c;
    UPDATE redrive.source_job
       SET resolution = p_resolution, resolution_note = p_note, resolved_by = session_user,
           resolved_at = clock_timestamp(), version = version + 1, updated_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));
    RETURN redrive.finish_action(
        p_action_id, 'resolve', v_targets, p_reason, p_ticket, p_os_user, NULL,
        jsonb_build_object('status', 'resolved', 'resolution', p_resolution, 'note', p_note,
                           'source', 'pgboss'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

CREATE OR REPLACE FUNCTION redrive_pgboss.claim_dead_letters(p_action_id uuid, p_targets jsonb,
                                                  p_release boolean, p_reason text,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_action text := CASE WHEN p_release THEN 'unclaim' ELSE 'claim' END;
    v_applied bigint[];
    v_targets jsonb;
    v_results jsonb;
    v_conflicts integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.begin_action(
        p_action_id, v_action, p_os_user,
        p_targets,
        jsonb_build_object('reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    WITH c AS (SELECT t.*, CASE WHEN t.version IS NULL OR t.version <> t.seen_version
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_pgboss.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version, 'source', 'pgboss',
                                                 'job_ref', c.job_ref) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'result', c.result) ORDER BY c.id)
                        FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_applied, v_targets, v_results, v_conflicts
      FROM c;
    UPDATE redrive.source_job
       SET claimed_by = CASE WHEN p_release THEN NULL ELSE session_user END,
           claimed_at = CASE WHEN p_release THEN NULL ELSE clock_timestamp() END,
           version = version + 1, updated_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));
    RETURN redrive.finish_action(
        p_action_id, v_action, v_targets, p_reason, NULL, p_os_user, NULL,
        jsonb_build_object('claimed_by', CASE WHEN p_release THEN NULL ELSE session_user END),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'results', v_results));
END
$$;

UPDATE redrive.source SET adapter_version = 2 WHERE name = 'pgboss';
