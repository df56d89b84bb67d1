-- SPDX-License-Identifier: GPL-3.0-or-later
-- A bulk chunk's check that it is exactly its slice of the frozen list (docs/domain.md, "Bulk
-- actions act on the frozen set") expanded the whole list into rows for every chunk: a bulk
-- requeue of 100,000 spent 40 ms a chunk on it, 4 s of its 100 chunks, and the cost grows with
-- the square of the list (docs/benchmarks.md, "bulk requeue"). The slice is now taken by
-- position with a JSON path, the same elements in the same order, so the comparison and every
-- error are as before. Nothing else of begin_action() changes; CREATE OR REPLACE keeps its
-- grants.

CREATE OR REPLACE FUNCTION redrive.begin_action(p_action_id uuid, p_action text, p_os_user text,
                                     p_targets jsonb, p_params jsonb,
                                     p_bulk_id uuid DEFAULT NULL, p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_digest bytea;
    v_prev redrive.operator_action%ROWTYPE;
    v_bulk redrive.bulk_operation%ROWTYPE;
    v_slice jsonb;
BEGIN
    IF p_action_id IS NULL THEN
        RAISE EXCEPTION 'an action id is required' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF p_targets IS NOT NULL THEN
        PERFORM redrive.require_targets(p_targets, redrive.max_targets_per_call());
    END IF;
    IF (p_bulk_id IS NULL) <> (p_chunk_no IS NULL) THEN
        RAISE EXCEPTION 'a bulk chunk needs both its bulk id and its chunk number'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_bulk_id IS NOT NULL THEN
        SELECT * INTO v_bulk FROM redrive.bulk_operation WHERE bulk_id = p_bulk_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no bulk action %: freeze its list first', p_bulk_id
                  USING ERRCODE = 'no_data_found';
        END IF;
        IF v_bulk.actor <> session_user THEN
            RAISE EXCEPTION 'bulk action % belongs to %; only its owner runs its chunks',
                            p_bulk_id, v_bulk.actor
                  USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF v_bulk.action <> p_action THEN
            RAISE EXCEPTION 'bulk action % is a % action, not %', p_bulk_id, v_bulk.action,
                            p_action
                  USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF p_chunk_no < 0 OR p_chunk_no::bigint * v_bulk.chunk_size >= v_bulk.target_count THEN
            RAISE EXCEPTION 'bulk action % has no chunk % (% targets in chunks of %)',
                            p_bulk_id, p_chunk_no, v_bulk.target_count, v_bulk.chunk_size
                  USING ERRCODE = 'invalid_parameter_value';
        END IF;
        -- The chunk's slice by position (0-based, both ends included; lax mode ends it at the
        -- list's end), not by expanding the whole frozen list for every chunk.
        v_slice := jsonb_path_query_array(
            v_bulk.targets, '$[$from to $to]',
            jsonb_build_object('from', p_chunk_no::bigint * v_bulk.chunk_size,
                               'to', (p_chunk_no::bigint + 1) * v_bulk.chunk_size - 1));
        IF v_slice IS DISTINCT FROM p_targets THEN
            RAISE EXCEPTION 'chunk % of bulk action % is not that chunk of its frozen list',
                            p_chunk_no, p_bulk_id
                  USING ERRCODE = 'check_violation',
                        HINT = 'A bulk action applies exactly the list confirmed at preview.';
        END IF;
        IF NOT (v_bulk.params <@ p_params) OR v_bulk.reason IS DISTINCT FROM p_params ->> 'reason'
           OR v_bulk.ticket IS DISTINCT FROM p_params ->> 'ticket'
           OR v_bulk.os_user IS DISTINCT FROM p_os_user THEN
            RAISE EXCEPTION 'chunk % of bulk action % has other options or another reason than '
                            'the frozen bulk', p_chunk_no, p_bulk_id
                  USING ERRCODE = 'check_violation';
        END IF;
    END IF;

    v_digest := sha256(convert_to(jsonb_build_object('action', p_action, 'targets', p_targets,
                                                     'params', p_params, 'bulk_id', p_bulk_id,
                                                     'chunk_no', p_chunk_no,
                                                     'os_user', p_os_user)::text, 'UTF8'));
    INSERT INTO redrive.operator_action (action_id, action, os_user, bulk_id, chunk_no,
                                         params_digest)
    VALUES (p_action_id, p_action, p_os_user, p_bulk_id, p_chunk_no, v_digest)
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        RETURN NULL;
    END IF;

    SELECT * INTO v_prev FROM redrive.operator_action WHERE action_id = p_action_id;
    IF NOT FOUND THEN
        -- The chunk already ran under another action id (a resume after a lost reply): the
        -- owner and the slice were checked above, so this is the same request.
        SELECT * INTO v_prev FROM redrive.operator_action
         WHERE bulk_id = p_bulk_id AND chunk_no = p_chunk_no;
        IF v_prev.params_digest IS DISTINCT FROM v_digest THEN
            RAISE EXCEPTION 'chunk % of bulk action % already ran with other parameters',
                            p_chunk_no, p_bulk_id
                  USING ERRCODE = 'unique_violation',
                        HINT = 'A resume repeats each chunk exactly as it first ran.';
        END IF;
        RETURN v_prev.outcome || jsonb_build_object('replayed', true);
    END IF;
    IF v_prev.actor <> session_user THEN
        RAISE EXCEPTION 'action id % was used by another login; an action id is never shared',
                        p_action_id
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF v_prev.action <> p_action THEN
        RAISE EXCEPTION 'action id % was already used for %, not %', p_action_id, v_prev.action,
                        p_action
              USING ERRCODE = 'unique_violation';
    END IF;
    IF v_prev.bulk_id IS DISTINCT FROM p_bulk_id OR v_prev.chunk_no IS DISTINCT FROM p_chunk_no THEN
        RAISE EXCEPTION 'action id % was already used for another bulk chunk', p_action_id
              USING ERRCODE = 'unique_violation';
    END IF;
    IF v_prev.params_digest IS DISTINCT FROM v_digest THEN
        RAISE EXCEPTION 'action id % was already used with other targets or parameters',
                        p_action_id
              USING ERRCODE = 'unique_violation',
                    HINT = 'A retry repeats the same request; a new request takes a new action id.';
    END IF;
    RETURN v_prev.outcome || jsonb_build_object('replayed', true);
END
$$;
