-- The graphile-worker adapter, version 2: its actions take bound action ids (docs/security.md). Each
-- action starts with redrive.begin_action, which checks every target carries a version, caps
-- the targets of one call, checks a bulk chunk against its owner and frozen list, and binds the
-- action id to the caller, the action and a digest of its parameters. The bodies are otherwise
-- those of version 1; redrive.finish_action now names every target with its result.

CREATE OR REPLACE FUNCTION redrive_graphile.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
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
    c record;
    v_targets jsonb := '[]';
    v_before jsonb := '[]';
    v_results jsonb := '[]';
    v_conflicts integer := 0;
    v_refused integer := 0;
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
    FOR c IN SELECT * FROM redrive_graphile.lock_targets(p_targets) LOOP
        IF c.version IS NULL THEN
            v_results := v_results || jsonb_build_object('id', c.id, 'result', 'not_found');
            v_conflicts := v_conflicts + 1;
        ELSIF c.version <> c.seen_version OR c.status <> 'open' THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'conflict',
                'detail', format('now %s (%s) at version %s (you saw version %s)', c.status,
                                 c.job_state, c.version, c.seen_version));
            v_conflicts := v_conflicts + 1;
        ELSIF c.job_state <> 'failed' THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'refused',
                'detail', format('worker %s holds the job since %s: release it first',
                                 c.locked_by, c.locked_at));
            v_refused := v_refused + 1;
        ELSE
            -- graphile-worker's documented admin function, once per job (max_attempts differs).
            PERFORM graphile_worker.reschedule_jobs(
                ARRAY[c.job_id], run_at => now(),
                attempts => CASE WHEN p_reset_attempts THEN 0 END,
                max_attempts => CASE WHEN p_reset_attempts THEN NULL
                                     ELSE greatest(c.max_attempts, c.attempts + 1) END);
            UPDATE redrive.source_job
               SET version = version + 1, requeued_by = session_user,
                   requeued_at = clock_timestamp(), succeeded_at = NULL,
                   updated_at = clock_timestamp()
             WHERE id = c.id;
            v_targets := v_targets || jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                         'version', c.seen_version,
                                                         'source', 'graphile-worker',
                                                         'job_ref', c.job_ref);
            v_before := v_before || jsonb_build_object('id', c.id, 'status', c.status,
                                                       'attempts', c.attempts,
                                                       'max_attempts', c.max_attempts);
        END IF;
    END LOOP;

    RETURN redrive.finish_action(
        p_action_id, 'requeue', v_targets, p_reason, p_ticket, p_os_user, v_before,
        jsonb_build_object('status', 'requeued', 'reset_attempts', p_reset_attempts,
                           'source', 'graphile-worker',
                           'via', 'graphile_worker.reschedule_jobs'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', v_refused, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

CREATE OR REPLACE FUNCTION redrive_graphile.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
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
    SELECT * INTO d FROM redrive_graphile.lock_targets(
        jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)));
    IF d.version IS NULL OR d.version <> p_version OR d.status <> 'open'
       OR d.job_state <> 'failed' THEN
        RETURN redrive.finish_action(
            p_action_id, 'edit_and_requeue', '[]', p_reason, p_ticket, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', p_dead_letter, 'result', 'conflict'))));
    END IF;
    UPDATE graphile_worker._private_jobs SET payload = p_payload::json WHERE id = d.job_id;
    PERFORM graphile_worker.reschedule_jobs(
        ARRAY[d.job_id], run_at => now(),
        attempts => CASE WHEN p_reset_attempts THEN 0 END,
        max_attempts => CASE WHEN p_reset_attempts THEN NULL
                             ELSE greatest(d.max_attempts, d.attempts + 1) END);
    UPDATE redrive.source_job
       SET version = version + 1, requeued_by = session_user, requeued_at = clock_timestamp(),
           succeeded_at = NULL, updated_at = clock_timestamp()
     WHERE id = d.id;
    RETURN redrive.finish_action(
        p_action_id, 'edit_and_requeue',
        jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', d.id,
                                             'version', d.version, 'source', 'graphile-worker',
                                             'job_ref', d.job_ref)),
        p_reason, p_ticket, p_os_user, jsonb_build_object('payload', d.payload),
        jsonb_build_object('payload', p_payload),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', d.id, 'result', 'applied'))));
END
$$;

CREATE OR REPLACE FUNCTION redrive_graphile.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
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
                                     OR t.job_state <> 'failed'
                                THEN 'conflict' ELSE 'applied' END AS result
                 FROM redrive_graphile.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version,
                                                 'source', 'graphile-worker',
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
                           'source', 'graphile-worker'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

CREATE OR REPLACE FUNCTION redrive_graphile.claim_dead_letters(p_action_id uuid, p_targets jsonb,
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
                 FROM redrive_graphile.lock_targets(p_targets) t)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.seen_version,
                                                 'source', 'graphile-worker',
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

CREATE OR REPLACE FUNCTION redrive_graphile.release_stuck_jobs(p_action_id uuid, p_targets jsonb,
                                                    p_reason text, p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    c record;
    v_targets jsonb := '[]';
    v_before jsonb := '[]';
    v_results jsonb := '[]';
    v_conflicts integer := 0;
    v_refused integer := 0;
    v_now timestamptz := clock_timestamp();
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.begin_action(
        p_action_id, 'release_stuck', p_os_user,
        p_targets,
        jsonb_build_object('reason', p_reason, 'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    FOR c IN SELECT * FROM redrive_graphile.lock_targets(p_targets) LOOP
        IF c.version IS NULL THEN
            v_results := v_results || jsonb_build_object('id', c.id, 'result', 'not_found');
            v_conflicts := v_conflicts + 1;
        ELSIF c.version <> c.seen_version OR c.job_state NOT IN ('stuck', 'locked') THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'conflict',
                'detail', format('now %s at version %s (you saw version %s)', c.job_state,
                                 c.version, c.seen_version));
            v_conflicts := v_conflicts + 1;
        ELSIF c.job_state = 'locked' THEN
            v_results := v_results || jsonb_build_object(
                'id', c.id, 'result', 'refused',
                'detail', format('worker %s took the job at %s, less than %s ago: it may be '
                                 'alive', c.locked_by, c.locked_at,
                                 (SELECT stuck_after FROM redrive_graphile.adapter_settings)));
            v_refused := v_refused + 1;
        ELSE
            INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at,
                                                finished_at, outcome, error_class, error_code,
                                                message, worker_id)
            VALUES (c.id, c.attempts, least(c.locked_at, v_now), v_now, 'abandoned',
                    'ambiguous', 'worker_lost',
                    format('worker %s held the job from %s without a result; released by %s: %s',
                           c.locked_by, c.locked_at, session_user, p_reason),
                    c.locked_by);
            -- graphile-worker's resetLockedAt, for this job and its worker only.
            UPDATE graphile_worker._private_jobs
               SET locked_at = NULL, locked_by = NULL, run_at = greatest(run_at, now())
             WHERE id = c.job_id AND locked_by = c.locked_by;
            UPDATE graphile_worker._private_job_queues
               SET locked_at = NULL, locked_by = NULL
             WHERE id = c.job_queue_id AND locked_by = c.locked_by;
            UPDATE redrive.source_job
               SET version = version + 1, updated_at = v_now
             WHERE id = c.id;
            v_targets := v_targets || jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                         'version', c.seen_version,
                                                         'source', 'graphile-worker',
                                                         'job_ref', c.job_ref);
            v_before := v_before || jsonb_build_object('id', c.id, 'locked_by', c.locked_by,
                                                       'locked_at', c.locked_at,
                                                       'attempts', c.attempts,
                                                       'max_attempts', c.max_attempts);
        END IF;
    END LOOP;
    RETURN redrive.finish_action(
        p_action_id, 'release_stuck', v_targets, p_reason, p_ticket, p_os_user, v_before,
        jsonb_build_object('locked_by', NULL, 'source', 'graphile-worker',
                           'via', 'graphile-worker resetLockedAt, for these jobs'),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', v_refused, 'results', v_results));
END
$$;

UPDATE redrive.source SET adapter_version = 2 WHERE name = 'graphile-worker';
