-- Redrive native schema, version 7: actions, audit and settings that hold against a hostile
-- insider (docs/security.md). What changes:
--   * audit appends serialize on a row lock only the schema owner's code can take, never on an
--     advisory lock any login can hold;
--   * an action id is bound to its actor, its action and a digest of its parameters, a bulk
--     chunk is checked against the frozen list and its owner, every target must carry a
--     version, and one call takes at most redrive.max_targets_per_call() targets;
--   * every audit entry names each target it concerned with its result (applied, conflict,
--     refused, not_found);
--   * the worker carries out only the outbox commands it claimed, never reopens a resolved
--     dead letter, and audits every change it makes to a dead letter or a compensation;
--   * settings change only through an audited function (and any other change is audited too);
--   * notifications carry no data: they are hints to re-read through the role-checked views.

-- ---------------------------------------------------------------------------------------------
-- An owner-level role: changes settings (the approval threshold). Not an operator role.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'redrive_admin') THEN
        CREATE ROLE redrive_admin NOLOGIN;
    END IF;
END
$roles$;
COMMENT ON ROLE redrive_admin IS 'Redrive: change settings such as the compensation approval threshold (audited)';
GRANT USAGE ON SCHEMA redrive TO redrive_admin;

-- ---------------------------------------------------------------------------------------------
-- The audit chain's append lock. A login with no privilege on this table cannot lock its row
-- (row locks need UPDATE privilege), so only the owner's trigger below serializes appends on it.
-- An advisory lock could be taken and held by anyone who can connect.
CREATE TABLE redrive.audit_chain_lock (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton)
);
INSERT INTO redrive.audit_chain_lock DEFAULT VALUES;
REVOKE ALL ON redrive.audit_chain_lock FROM PUBLIC;
-- Readable like every table (SELECT alone cannot lock a row: FOR UPDATE/SHARE need UPDATE).
GRANT SELECT ON redrive.audit_chain_lock
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
COMMENT ON TABLE redrive.audit_chain_lock IS
    'One row; the audit trigger locks it FOR UPDATE to serialize appends (see docs/security.md)';

CREATE OR REPLACE FUNCTION redrive.audit_log_chain() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
-- A session that appended and then keeps its transaction open holds the lock until it ends; the
-- others wait at most this long, then fail with lock_not_available instead of hanging.
SET lock_timeout = '10s'
AS $$
DECLARE
    v_prev bytea;
BEGIN
    -- Held until commit, so id order is chain order and the chain never forks. Locking a row
    -- this transaction already locked costs nothing and writes nothing.
    PERFORM 1 FROM redrive.audit_chain_lock FOR UPDATE;
    NEW.id := nextval('redrive.audit_log_id_seq');
    SELECT hash INTO v_prev FROM redrive.audit_log ORDER BY id DESC LIMIT 1;
    NEW.at := clock_timestamp();
    NEW.db_user := session_user;
    NEW.client_addr := inet_client_addr();
    NEW.prev_hash := v_prev;
    NEW.hash := redrive.audit_entry_hash(v_prev, NEW);
    RETURN NEW;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Action ids bound to actor, action and parameters.
ALTER TABLE redrive.operator_action ADD COLUMN params_digest bytea;
COMMENT ON COLUMN redrive.operator_action.params_digest IS
    'SHA-256 of the action''s canonical parameters (targets, options, reason): a replay must match';
CREATE UNIQUE INDEX operator_action_bulk_chunk_idx ON redrive.operator_action (bulk_id, chunk_no)
    WHERE bulk_id IS NOT NULL;
DROP INDEX redrive.operator_action_bulk_idx;

-- The most targets one action call takes. A bulk action freezes its list once and applies it
-- in chunks of at most this many; one call with more is refused before any work.
CREATE FUNCTION redrive.max_targets_per_call() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN 1000;

-- Checks a target list: a JSON array of 1..max_targets_per_call() objects, each with an id and
-- an integer version (the version the operator saw: a missing one is never taken as a match).
CREATE FUNCTION redrive.require_targets(p_targets jsonb, p_limit integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_bad jsonb;
    v_duplicate text;
    v_count integer;
BEGIN
    IF p_targets IS NULL OR jsonb_typeof(p_targets) <> 'array' THEN
        RAISE EXCEPTION 'the targets must be a JSON array of {"id": ..., "version": ...}'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_count := jsonb_array_length(p_targets);
    IF v_count = 0 THEN
        RAISE EXCEPTION 'no targets' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_count > p_limit THEN
        RAISE EXCEPTION 'too many targets in one call: % (at most %)', v_count, p_limit
              USING ERRCODE = 'program_limit_exceeded',
                    HINT = 'Run it as a bulk action: the list is frozen once and applied in chunks.';
    END IF;
    SELECT e INTO v_bad FROM jsonb_array_elements(p_targets) e
     WHERE jsonb_typeof(e) IS DISTINCT FROM 'object'
        OR coalesce(jsonb_typeof(e -> 'id'), 'null') NOT IN ('number', 'string')
        OR coalesce(jsonb_typeof(e -> 'version'), 'null') <> 'number'
        OR (e ->> 'version') !~ '^-?[0-9]{1,9}$'
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'target % has no id or no version', v_bad
              USING ERRCODE = 'null_value_not_allowed',
                    HINT = 'Every target carries the version the operator saw, so a change made '
                           'since is reported as a conflict instead of being overwritten.';
    END IF;
    -- Once each: two versions of one target would leave which one counts to the array order.
    -- Ids compare by value: 5, "5", "05" and " 5" are one target.
    SELECT min(e ->> 'id') INTO v_duplicate FROM jsonb_array_elements(p_targets) e
     GROUP BY CASE WHEN btrim(e ->> 'id') ~ '^[0-9]{1,30}$'
                   THEN btrim(e ->> 'id')::numeric::text ELSE e ->> 'id' END
     HAVING count(*) > 1 LIMIT 1;
    IF v_duplicate IS NOT NULL THEN
        RAISE EXCEPTION 'target % appears more than once', v_duplicate
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Name each target once, with the version the operator saw.';
    END IF;
END
$$;

-- Starts an operator action: validates its targets, checks a bulk chunk against its frozen list,
-- and claims the action id bound to (actor, action, digest of targets and parameters).
-- Returns NULL when the action is new, or the first outcome (with "replayed": true) when the
-- same actor repeats the same request. Raises when the id was used by another login, for
-- another action or with other targets or parameters, naming which. p_targets NULL: the action
-- takes no versioned targets (a note). A chunk of a bulk (p_bulk_id, p_chunk_no) must be run by
-- the bulk's owner with exactly that chunk's slice of the frozen list and its parameters; it is
-- applied at most once whatever action id it comes with.
CREATE FUNCTION redrive.begin_action(p_action_id uuid, p_action text, p_os_user text,
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
        SELECT coalesce(jsonb_agg(e ORDER BY o), '[]') INTO v_slice
          FROM jsonb_array_elements(v_bulk.targets) WITH ORDINALITY AS x (e, o)
         WHERE o > p_chunk_no::bigint * v_bulk.chunk_size
           AND o <= (p_chunk_no::bigint + 1) * v_bulk.chunk_size;
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

-- The five-argument claim of earlier versions bound nothing but the action name. Source
-- adapters installed before this version still call it: refuse, so they are upgraded.
CREATE OR REPLACE FUNCTION redrive.claim_action_id(p_action_id uuid, p_action text,
                                                   p_os_user text, p_bulk_id uuid,
                                                   p_chunk_no integer)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'this source adapter predates bound action ids'
          USING ERRCODE = 'feature_not_supported',
                HINT = 'Run `redrive install-source` again to upgrade it.';
END
$$;

-- Appends the audit entry and stores the outcome with the action id; returns the outcome. The
-- entry names every target the action concerned with its result: targets given without one
-- were applied, and each target the outcome's "results" lists (conflict, refused, not_found)
-- is added when p_targets does not name it already, so a refused or conflicting action is
-- found by target too.
CREATE OR REPLACE FUNCTION redrive.finish_action(p_action_id uuid, p_action text,
                                                 p_targets jsonb, p_reason text, p_ticket text,
                                                 p_os_user text, p_before jsonb, p_after jsonb,
                                                 p_outcome jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_audit bigint;
    v_targets jsonb;
    v_type text := coalesce(p_targets -> 0 ->> 'type', 'dead_letter');
    v_outcome jsonb := p_outcome || jsonb_build_object('action_id', p_action_id,
                                                       'replayed', false);
BEGIN
    SELECT coalesce(jsonb_agg(t ORDER BY o), '[]') INTO v_targets
      FROM (SELECT CASE WHEN t ? 'result' THEN t
                        ELSE t || '{"result": "applied"}' END AS t, o
              FROM jsonb_array_elements(coalesce(p_targets, '[]')) WITH ORDINALITY AS x (t, o)
            UNION ALL
            SELECT jsonb_build_object('type', v_type, 'id', r -> 'id', 'result', r -> 'result'),
                   1000000 + o
              FROM jsonb_array_elements(coalesce(p_outcome -> 'results', '[]'))
                   WITH ORDINALITY AS y (r, o)
             WHERE r ->> 'result' <> 'applied'
               AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(p_targets, '[]')) g
                                WHERE g -> 'id' = r -> 'id')) u;
    INSERT INTO redrive.audit_log (os_user, action, targets, reason, ticket, before, after,
                                   action_id, outcome)
    VALUES (p_os_user, p_action, v_targets, p_reason, p_ticket, p_before, p_after, p_action_id,
            p_outcome)
    RETURNING id INTO v_audit;
    v_outcome := v_outcome || jsonb_build_object('audit_id', v_audit);
    UPDATE redrive.operator_action SET outcome = v_outcome, audit_id = v_audit
     WHERE action_id = p_action_id;
    RETURN v_outcome;
END
$$;

-- The audit targets of a set-based action: every target with its result (and the version the
-- operator saw), in id order. p_results: rows of (id, version, result).
CREATE FUNCTION redrive.audit_targets(p_type text, p_results jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT coalesce(jsonb_agg(jsonb_build_object('type', p_type, 'id', r -> 'id',
                                                     'version', r -> 'version',
                                                     'result', r -> 'result')
                                  ORDER BY r -> 'id'), '[]')
          FROM jsonb_array_elements(p_results) r);

-- ---------------------------------------------------------------------------------------------
-- Requeue dead letters (roles: oncall). p_targets: [{"id": 1, "version": 3}, ...] exactly as
-- confirmed, at most max_targets_per_call(). The outcome counts confirmed, applied, conflicts
-- and refused, and lists in "results" the targets that were not applied, with why; the audit
-- entry names every target with its result. The job goes back to its queue through an outbox
-- command the worker relays; earlier attempts are kept.
CREATE OR REPLACE FUNCTION redrive.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
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
    v_all jsonb;
    v_applied bigint[];
    v_before jsonb;
    v_conflicts integer;
    v_refused integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    IF p_reset_attempts IS NULL THEN
        RAISE EXCEPTION 'say whether the attempt counter is reset' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    v_prev := redrive.begin_action(p_action_id, 'requeue', p_os_user, p_targets,
                                   jsonb_build_object('reset_attempts', p_reset_attempts,
                                                      'reason', p_reason, 'ticket', p_ticket),
                                   p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    -- Lock every target and its job in id order, so concurrent bulks cannot deadlock. (IN with
    -- unnest, not = ANY: a parameter array is searched linearly per row by a seq scan.)
    PERFORM 1 FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
     WHERE dl.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY dl.id FOR UPDATE OF dl, j;
    WITH t AS (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                      (e ->> 'version')::integer AS version
                 FROM jsonb_array_elements(p_targets) e),
         c AS (SELECT t.id, t.version, dl.version AS now_version, dl.status, dl.updated_at,
                      j.locked_by, j.locked_until,
                      CASE WHEN dl.id IS NULL THEN 'not_found'
                           WHEN dl.version <> t.version OR dl.status <> 'open' THEN 'conflict'
                           WHEN j.state = 'running' THEN 'refused'
                           ELSE 'applied' END AS result
                 FROM t LEFT JOIN redrive.dead_letter dl ON dl.id = t.id
                        LEFT JOIN redrive.job j ON j.id = dl.job_id)
    SELECT jsonb_agg(jsonb_build_object(
               'id', c.id, 'version', c.version, 'result', c.result,
               'detail', CASE c.result
                   WHEN 'conflict' THEN format('now %s at version %s (you saw version %s)',
                                               c.status, c.now_version, c.version)
                   WHEN 'refused' THEN
                       CASE WHEN c.locked_until > clock_timestamp()
                            THEN format('job is leased by %s until %s', c.locked_by,
                                        c.locked_until)
                            ELSE format('lease of %s expired at %s: release it first',
                                        c.locked_by, c.locked_until) END END) ORDER BY c.id),
           array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'status', c.status) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           count(*) FILTER (WHERE c.result IN ('conflict', 'not_found')),
           count(*) FILTER (WHERE c.result = 'refused')
      INTO v_all, v_applied, v_before, v_conflicts, v_refused
      FROM c;

    UPDATE redrive.dead_letter SET status = 'requeued'
     WHERE id IN (SELECT unnest(v_applied));
    INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key, action_id)
    SELECT 'requeue', 'job', dl.job_id::text,
           jsonb_build_object('job_id', dl.job_id, 'dead_letter_id', dl.id,
                              'reset_attempts', p_reset_attempts),
           'requeue:' || p_action_id || ':' || dl.id, p_action_id
      FROM redrive.dead_letter dl WHERE dl.id IN (SELECT unnest(v_applied)) ORDER BY dl.id;

    RETURN redrive.finish_action(
        p_action_id, 'requeue', redrive.audit_targets('dead_letter', v_all), p_reason, p_ticket,
        p_os_user, v_before,
        jsonb_build_object('status', 'requeued', 'reset_attempts', p_reset_attempts),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', coalesce(cardinality(v_applied), 0),
                           'conflicts', v_conflicts, 'refused', v_refused,
                           'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', (SELECT coalesce(jsonb_agg(r - 'version'), '[]')
                                         FROM jsonb_array_elements(v_all) r
                                        WHERE r ->> 'result' <> 'applied')));
END
$$;

-- Edit the payload and requeue one dead letter (roles: oncall). The audit entry keeps the
-- payload before and after.
CREATE OR REPLACE FUNCTION redrive.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
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
    v_result text;
    v_detail text;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    IF p_payload IS NULL OR jsonb_typeof(p_payload) NOT IN ('object', 'array') THEN
        RAISE EXCEPTION 'the edited payload must be a JSON object or array'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_reset_attempts IS NULL THEN
        RAISE EXCEPTION 'say whether the attempt counter is reset' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'edit_and_requeue', p_os_user,
        jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)),
        jsonb_build_object('payload', p_payload, 'reset_attempts', p_reset_attempts,
                           'reason', p_reason, 'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT dl.id, dl.version, dl.status, dl.job_id, j.state AS job_state, j.payload,
           j.locked_by, j.locked_until
      INTO d
      FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
     WHERE dl.id = p_dead_letter FOR UPDATE OF dl, j;
    IF NOT FOUND THEN
        v_result := 'not_found';
    ELSIF d.version <> p_version OR d.status <> 'open' THEN
        v_result := 'conflict';
        v_detail := format('now %s at version %s (you saw version %s)', d.status, d.version,
                           p_version);
    ELSIF d.job_state = 'running' THEN
        v_result := 'refused';
        v_detail := format('job is leased by %s until %s', d.locked_by, d.locked_until);
    ELSE
        v_result := 'applied';
        UPDATE redrive.dead_letter SET status = 'requeued' WHERE id = d.id;
        INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key,
                                    action_id)
        VALUES ('requeue', 'job', d.job_id::text,
                jsonb_build_object('job_id', d.job_id, 'dead_letter_id', d.id,
                                   'reset_attempts', p_reset_attempts, 'payload', p_payload),
                'requeue:' || p_action_id || ':' || d.id, p_action_id);
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'edit_and_requeue',
        jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', p_dead_letter,
                                             'version', p_version, 'result', v_result)),
        p_reason, p_ticket, p_os_user,
        CASE WHEN v_result = 'applied' THEN jsonb_build_object('payload', d.payload) END,
        CASE WHEN v_result = 'applied' THEN jsonb_build_object('payload', p_payload) END,
        jsonb_build_object('confirmed', 1, 'applied', (v_result = 'applied')::int,
                           'conflicts', (v_result IN ('conflict', 'not_found'))::int,
                           'refused', (v_result = 'refused')::int,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', p_dead_letter, 'result', v_result, 'detail', v_detail))));
END
$$;

-- Mark dead letters resolved (roles: oncall, support) with a resolution and a note.
CREATE OR REPLACE FUNCTION redrive.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
                                                        p_resolution text, p_note text,
                                                        p_reason text,
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
    v_all jsonb;
    v_applied bigint[];
    v_conflicts integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    IF p_resolution IS NULL OR p_resolution NOT IN ('fixed_by_hand', 'duplicate', 'not_needed') THEN
        RAISE EXCEPTION 'resolution must be fixed_by_hand, duplicate or not_needed'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.begin_action(p_action_id, 'resolve', p_os_user, p_targets,
                                   jsonb_build_object('resolution', p_resolution, 'note', p_note,
                                                      'reason', p_reason, 'ticket', p_ticket),
                                   p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    PERFORM 1 FROM redrive.dead_letter
     WHERE id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY id FOR UPDATE;
    WITH t AS (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                      (e ->> 'version')::integer AS version
                 FROM jsonb_array_elements(p_targets) e),
         c AS (SELECT t.id, t.version, dl.version AS now_version, dl.status,
                      CASE WHEN dl.id IS NULL THEN 'not_found'
                           WHEN dl.version <> t.version OR dl.status NOT IN ('open', 'requeued')
                           THEN 'conflict' ELSE 'applied' END AS result
                 FROM t LEFT JOIN redrive.dead_letter dl ON dl.id = t.id)
    SELECT jsonb_agg(jsonb_build_object(
               'id', c.id, 'version', c.version, 'result', c.result,
               'detail', CASE WHEN c.result = 'conflict'
                              THEN format('now %s at version %s (you saw version %s)', c.status,
                                          c.now_version, c.version) END) ORDER BY c.id),
           array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_all, v_applied, v_conflicts
      FROM c;
    UPDATE redrive.dead_letter
       SET status = 'resolved', resolution = p_resolution, resolution_note = p_note,
           resolved_by = session_user, resolved_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));
    RETURN redrive.finish_action(
        p_action_id, 'resolve', redrive.audit_targets('dead_letter', v_all), p_reason, p_ticket,
        p_os_user, NULL,
        jsonb_build_object('status', 'resolved', 'resolution', p_resolution, 'note', p_note),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', coalesce(cardinality(v_applied), 0),
                           'conflicts', v_conflicts, 'refused', 0,
                           'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', (SELECT coalesce(jsonb_agg(r - 'version'), '[]')
                                         FROM jsonb_array_elements(v_all) r
                                        WHERE r ->> 'result' <> 'applied')));
END
$$;

-- Claim (or release the claim on) dead letters, so others see who is on them
-- (roles: oncall, support).
CREATE OR REPLACE FUNCTION redrive.claim_dead_letters(p_action_id uuid, p_targets jsonb,
                                                      p_release boolean, p_reason text,
                                                      p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_action text := CASE WHEN p_release THEN 'unclaim' ELSE 'claim' END;
    v_all jsonb;
    v_applied bigint[];
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    IF p_release IS NULL THEN
        RAISE EXCEPTION 'say whether to claim or release' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    v_prev := redrive.begin_action(p_action_id, v_action, p_os_user, p_targets,
                                   jsonb_build_object('reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    PERFORM 1 FROM redrive.dead_letter
     WHERE id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY id FOR UPDATE;
    WITH t AS (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                      (e ->> 'version')::integer AS version
                 FROM jsonb_array_elements(p_targets) e),
         c AS (SELECT t.id, t.version,
                      CASE WHEN dl.id IS NULL THEN 'not_found'
                           WHEN dl.version <> t.version THEN 'conflict'
                           ELSE 'applied' END AS result
                 FROM t LEFT JOIN redrive.dead_letter dl ON dl.id = t.id)
    SELECT jsonb_agg(jsonb_build_object('id', c.id, 'version', c.version, 'result', c.result)
                     ORDER BY c.id),
           array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied')
      INTO v_all, v_applied
      FROM c;
    UPDATE redrive.dead_letter
       SET claimed_by = CASE WHEN p_release THEN NULL ELSE session_user END,
           claimed_at = CASE WHEN p_release THEN NULL ELSE clock_timestamp() END
     WHERE id IN (SELECT unnest(v_applied));
    RETURN redrive.finish_action(
        p_action_id, v_action, redrive.audit_targets('dead_letter', v_all), p_reason, NULL,
        p_os_user, NULL,
        jsonb_build_object('claimed_by', CASE WHEN p_release THEN NULL ELSE session_user END),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', coalesce(cardinality(v_applied), 0),
                           'conflicts', jsonb_array_length(p_targets)
                                        - coalesce(cardinality(v_applied), 0),
                           'refused', 0,
                           'results', (SELECT coalesce(jsonb_agg(r - 'version'), '[]')
                                         FROM jsonb_array_elements(v_all) r
                                        WHERE r ->> 'result' <> 'applied')));
END
$$;

-- A note on a dead letter, mismatch, compensation or key (roles: any operator role). Notes live
-- in the audit log, where nothing is ever changed. A note takes no version.
CREATE OR REPLACE FUNCTION redrive.add_note(p_action_id uuid, p_target_type text,
                                            p_target_id text, p_note text,
                                            p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support', 'redrive_approver']);
    PERFORM redrive.require_reason(p_note);
    IF p_target_type IS NULL OR p_target_type NOT IN ('dead_letter', 'mismatch', 'compensation',
                                                      'idempotency_key', 'job')
       OR p_target_id IS NULL THEN
        RAISE EXCEPTION 'a note needs a target: dead_letter, mismatch, compensation, '
                        'idempotency_key or job, and its id'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.begin_action(p_action_id, 'note', p_os_user, NULL,
                                   jsonb_build_object('target_type', p_target_type,
                                                      'target_id', p_target_id,
                                                      'note', p_note));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'note',
        jsonb_build_array(jsonb_build_object('type', p_target_type,
                                             'id', CASE WHEN p_target_id ~ '^[0-9]{1,30}$'
                                                        THEN to_jsonb(p_target_id::numeric)
                                                        ELSE to_jsonb(p_target_id) END,
                                             'result', 'applied')),
        p_note, NULL, p_os_user, NULL, NULL,
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0));
END
$$;

-- Release a stuck idempotency key (roles: oncall, support): only once its lease has expired.
CREATE OR REPLACE FUNCTION redrive.release_idempotency_key(p_action_id uuid, p_scope text,
                                                           p_key text, p_version integer,
                                                           p_reason text,
                                                           p_ticket text DEFAULT NULL,
                                                           p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    k redrive.idempotency_key%ROWTYPE;
    v_result text;
    v_detail text;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.begin_action(
        p_action_id, 'release_key', p_os_user,
        jsonb_build_array(jsonb_build_object('id', p_scope || ':' || p_key,
                                             'version', p_version)),
        jsonb_build_object('scope', p_scope, 'key', p_key, 'reason', p_reason,
                           'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO k FROM redrive.idempotency_key WHERE scope = p_scope AND key = p_key FOR UPDATE;
    IF NOT FOUND THEN
        v_result := 'not_found';
    ELSIF k.version <> p_version OR k.state <> 'processing' THEN
        v_result := 'conflict';
        v_detail := format('now %s at version %s (you saw version %s)', k.state, k.version,
                           p_version);
    ELSIF k.locked_until > clock_timestamp() THEN
        v_result := 'refused';
        v_detail := format('lease held by %s until %s', k.locked_by, k.locked_until);
    ELSE
        UPDATE redrive.idempotency_key
           SET state = 'failed', locked_by = NULL, locked_until = NULL,
               error_message = 'released by ' || session_user || ': ' || p_reason,
               updated_at = clock_timestamp(), version = version + 1
         WHERE scope = p_scope AND key = p_key;
        v_result := 'applied';
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'release_key',
        jsonb_build_array(jsonb_build_object('type', 'idempotency_key',
                                             'id', p_scope || ':' || p_key,
                                             'version', p_version, 'result', v_result)),
        p_reason, p_ticket, p_os_user,
        CASE WHEN k.key IS NOT NULL THEN jsonb_build_object('state', k.state, 'locked_by',
                                                           k.locked_by, 'locked_until',
                                                           k.locked_until) END,
        CASE WHEN v_result = 'applied' THEN jsonb_build_object('state', 'failed') END,
        jsonb_build_object('confirmed', 1, 'applied', (v_result = 'applied')::int,
                           'conflicts', (v_result IN ('conflict', 'not_found'))::int,
                           'refused', (v_result = 'refused')::int,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', p_scope || ':' || p_key, 'result', v_result,
                               'detail', v_detail))));
END
$$;

-- Resolve a reconciliation mismatch (roles: support).
CREATE OR REPLACE FUNCTION redrive.resolve_mismatch(p_action_id uuid, p_mismatch bigint,
                                                    p_version integer, p_resolution text,
                                                    p_reason text, p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    m redrive.reconciliation_mismatch%ROWTYPE;
    v_result text;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.begin_action(
        p_action_id, 'resolve_mismatch', p_os_user,
        jsonb_build_array(jsonb_build_object('id', p_mismatch, 'version', p_version)),
        jsonb_build_object('resolution', p_resolution, 'reason', p_reason, 'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO m FROM redrive.reconciliation_mismatch WHERE id = p_mismatch FOR UPDATE;
    v_result := CASE WHEN NOT FOUND THEN 'not_found'
                     WHEN m.version <> p_version OR m.status <> 'open' THEN 'conflict'
                     ELSE 'applied' END;
    IF v_result = 'applied' THEN
        UPDATE redrive.reconciliation_mismatch
           SET status = 'resolved', resolution = p_resolution, resolved_by = session_user,
               resolved_at = clock_timestamp(), version = version + 1
         WHERE id = p_mismatch;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'resolve_mismatch',
        jsonb_build_array(jsonb_build_object('type', 'mismatch', 'id', p_mismatch,
                                             'version', p_version, 'result', v_result)),
        p_reason, p_ticket, p_os_user, NULL,
        CASE WHEN v_result = 'applied'
             THEN jsonb_build_object('status', 'resolved', 'resolution', p_resolution) END,
        jsonb_build_object('confirmed', 1, 'applied', (v_result = 'applied')::int,
                           'conflicts', (v_result <> 'applied')::int, 'refused', 0,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', p_mismatch, 'result', v_result,
                               'detail', CASE WHEN v_result = 'conflict'
                                              THEN format('now %s at version %s (you saw version %s)',
                                                          m.status, m.version, p_version) END))));
END
$$;

CREATE OR REPLACE FUNCTION redrive.request_compensation(p_action_id uuid, p_target_type text,
                                                        p_target_id bigint, p_version integer,
                                                        p_kind text, p_amount_cents bigint,
                                                        p_reason text,
                                                        p_ticket text DEFAULT NULL,
                                                        p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_payment text;
    v_version integer;
    v_status text;
    v_pay record;
    v_refundable bigint;
    v_threshold bigint;
    v_request bigint;
    v_needs_approval boolean;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    IF p_target_type IS NULL OR p_target_type NOT IN ('dead_letter', 'mismatch') THEN
        RAISE EXCEPTION 'target type must be dead_letter or mismatch'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_kind IS NULL OR p_kind NOT IN ('refund', 'void', 'reversal') THEN
        RAISE EXCEPTION 'kind must be refund, void or reversal'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'compensate_request', p_os_user,
        jsonb_build_array(jsonb_build_object('id', p_target_id, 'version', p_version)),
        jsonb_build_object('target_type', p_target_type, 'kind', p_kind,
                           'amount_cents', p_amount_cents, 'reason', p_reason,
                           'ticket', p_ticket));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    IF p_target_type = 'dead_letter' THEN
        SELECT j.entity_id, dl.version, dl.status INTO v_payment, v_version, v_status
          FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
         WHERE dl.id = p_target_id FOR UPDATE OF dl;
    ELSE
        SELECT m.payment_ref, m.version, m.status INTO v_payment, v_version, v_status
          FROM redrive.reconciliation_mismatch m WHERE m.id = p_target_id FOR UPDATE;
    END IF;
    IF v_version IS NULL OR v_version <> p_version
       OR v_status NOT IN ('open', 'compensation_pending') THEN
        RETURN redrive.finish_action(
            p_action_id, 'compensate_request',
            jsonb_build_array(jsonb_build_object('type', p_target_type, 'id', p_target_id,
                                                 'version', p_version,
                                                 'result', CASE WHEN v_version IS NULL
                                                                THEN 'not_found'
                                                                ELSE 'conflict' END)),
            p_reason, p_ticket, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', p_target_id,
                                   'result', CASE WHEN v_version IS NULL THEN 'not_found'
                                                  ELSE 'conflict' END,
                                   'detail', CASE WHEN v_version IS NOT NULL
                                                  THEN format('now %s at version %s (you saw version %s)',
                                                              v_status, v_version, p_version)
                                             END))));
    END IF;
    SELECT * INTO v_pay FROM redrive.payment_list WHERE payment_ref = v_payment;
    IF v_pay.charge_ref IS NULL THEN
        RAISE EXCEPTION 'no charge is known for payment %', coalesce(v_payment, '(none)')
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Only payment-related dead letters and mismatches can be compensated.';
    END IF;
    v_refundable := redrive.refundable_cents(v_payment);
    IF p_amount_cents IS NULL OR p_amount_cents <= 0 OR p_amount_cents > v_refundable THEN
        RAISE EXCEPTION 'amount % exceeds what can be refunded for % (% cents)',
                        p_amount_cents, v_payment, v_refundable
              USING ERRCODE = 'check_violation';
    END IF;
    SELECT compensation_approval_cents INTO v_threshold FROM redrive.settings;
    -- No settings row (deleted by the owner) means every request waits for a second person.
    v_needs_approval := p_amount_cents >= coalesce(v_threshold, 0);
    INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,
                                              amount_cents, currency, status, requires_approval,
                                              requested_by, reason, ticket, action_id)
    VALUES (p_target_type, p_target_id, p_kind, v_payment, p_amount_cents, v_pay.currency,
            CASE WHEN v_needs_approval THEN 'pending_approval' ELSE 'approved' END,
            v_needs_approval, session_user, p_reason, p_ticket, p_action_id)
    RETURNING id INTO v_request;
    IF p_target_type = 'dead_letter' THEN
        UPDATE redrive.dead_letter SET status = 'compensation_pending' WHERE id = p_target_id;
    ELSE
        UPDATE redrive.reconciliation_mismatch SET status = 'compensation_pending',
               version = version + 1 WHERE id = p_target_id;
    END IF;
    IF NOT v_needs_approval THEN
        INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key,
                                    action_id)
        VALUES ('compensate', 'compensation', v_request::text,
                jsonb_build_object('compensation_id', v_request, 'charge_ref', v_pay.charge_ref,
                                   'amount_cents', p_amount_cents, 'kind', p_kind),
                'compensate:' || v_request, p_action_id);
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'compensate_request',
        jsonb_build_array(jsonb_build_object('type', p_target_type, 'id', p_target_id,
                                             'version', p_version, 'result', 'applied'),
                          jsonb_build_object('type', 'compensation', 'id', v_request,
                                             'result', 'applied')),
        p_reason, p_ticket, p_os_user, jsonb_build_object('status', v_status),
        jsonb_build_object('status', 'compensation_pending', 'amount_cents', p_amount_cents,
                           'currency', v_pay.currency, 'kind', p_kind,
                           'requires_approval', v_needs_approval),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'compensation_id', v_request, 'requires_approval', v_needs_approval));
END
$$;

-- Locks a compensation's target (as request_compensation does), so deciding on it and filing a
-- new request on it take turns. Always true.
CREATE FUNCTION redrive.lock_compensation_target(p_type text, p_id bigint) RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_type = 'dead_letter' THEN
        PERFORM 1 FROM redrive.dead_letter WHERE id = p_id FOR UPDATE;
    ELSE
        PERFORM 1 FROM redrive.reconciliation_mismatch WHERE id = p_id FOR UPDATE;
    END IF;
    RETURN true;
END
$$;

-- Whether another compensation request than p_except is open on the target. Called after
-- lock_compensation_target, in a statement of its own, so it sees requests committed meanwhile.
CREATE FUNCTION redrive.other_open_compensation(p_type text, p_id bigint, p_except bigint)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT 1 FROM redrive.compensation_request o
                WHERE o.target_type = p_type AND o.target_id = p_id AND o.id <> p_except
                  AND o.status IN ('pending_approval', 'approved', 'executing'));

-- Approve or reject a compensation request (roles: approver). The requester can never decide
-- their own request (checked here and by the table's CHECK constraint); approval re-checks the
-- state and that the amount is still refundable.
CREATE OR REPLACE FUNCTION redrive.decide_compensation(p_action_id uuid, p_request bigint,
                                                       p_version integer, p_approve boolean,
                                                       p_reason text,
                                                       p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_action text := CASE WHEN p_approve THEN 'compensate_approve' ELSE 'compensate_reject' END;
    c redrive.compensation_request%ROWTYPE;
    v_pay record;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_approver']);
    PERFORM redrive.require_reason(p_reason);
    IF p_approve IS NULL THEN
        RAISE EXCEPTION 'say whether to approve or reject' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, v_action, p_os_user,
        jsonb_build_array(jsonb_build_object('id', p_request, 'version', p_version)),
        jsonb_build_object('reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO c FROM redrive.compensation_request WHERE id = p_request FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no compensation request %', p_request USING ERRCODE = 'no_data_found';
    END IF;
    IF c.requested_by = session_user THEN
        RAISE EXCEPTION 'you requested this compensation; a different person must decide it'
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF c.version <> p_version OR c.status <> 'pending_approval' THEN
        RETURN redrive.finish_action(
            p_action_id, v_action,
            jsonb_build_array(jsonb_build_object('type', 'compensation', 'id', c.id,
                                                 'version', p_version, 'result', 'conflict')),
            p_reason, NULL, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', c.id, 'result', 'conflict',
                                   'detail', format('now %s at version %s (you saw version %s)',
                                                    c.status, c.version, p_version)))));
    END IF;
    IF p_approve AND c.amount_cents > redrive.refundable_cents(c.payment_ref) + c.amount_cents THEN
        RAISE EXCEPTION 'amount % is no longer refundable for %', c.amount_cents, c.payment_ref
              USING ERRCODE = 'check_violation';
    END IF;
    INSERT INTO redrive.compensation_approval (request_id, requested_by, decided_by, decision,
                                               reason, action_id)
    VALUES (c.id, c.requested_by, session_user,
            CASE WHEN p_approve THEN 'approved' ELSE 'rejected' END, p_reason, p_action_id);
    UPDATE redrive.compensation_request
       SET status = CASE WHEN p_approve THEN 'approved' ELSE 'rejected' END,
           version = version + 1
     WHERE id = c.id;
    IF p_approve THEN
        SELECT * INTO v_pay FROM redrive.payment_list WHERE payment_ref = c.payment_ref;
        INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key,
                                    action_id)
        VALUES ('compensate', 'compensation', c.id::text,
                jsonb_build_object('compensation_id', c.id, 'charge_ref', v_pay.charge_ref,
                                   'amount_cents', c.amount_cents, 'kind', c.kind),
                'compensate:' || c.id, p_action_id);
    -- A rejection reopens the target only if it still waits for a compensation and no other
    -- request on it is open; a target another request compensated stays compensated.
    ELSIF redrive.lock_compensation_target(c.target_type, c.target_id)
          AND NOT redrive.other_open_compensation(c.target_type, c.target_id, c.id) THEN
        IF c.target_type = 'dead_letter' THEN
            UPDATE redrive.dead_letter SET status = 'open'
             WHERE id = c.target_id AND status = 'compensation_pending';
        ELSE
            UPDATE redrive.reconciliation_mismatch SET status = 'open', version = version + 1
             WHERE id = c.target_id AND status = 'compensation_pending';
        END IF;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, v_action,
        jsonb_build_array(jsonb_build_object('type', 'compensation', 'id', c.id,
                                             'version', c.version, 'result', 'applied'),
                          jsonb_build_object('type', c.target_type, 'id', c.target_id)),
        p_reason, NULL, p_os_user, jsonb_build_object('status', c.status),
        jsonb_build_object('status', CASE WHEN p_approve THEN 'approved' ELSE 'rejected' END),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'requested_by', c.requested_by, 'amount_cents', c.amount_cents));
END
$$;

-- Freeze a bulk action's target list before its first chunk runs (roles: oncall, support).
-- Every target must carry a version. Chunks are then run by this login only, each exactly its
-- slice of this list (redrive.begin_action checks both), at most once each.
CREATE OR REPLACE FUNCTION redrive.freeze_bulk(p_bulk_id uuid, p_action text, p_targets jsonb,
                                               p_chunk_size integer, p_params jsonb,
                                               p_reason text, p_ticket text DEFAULT NULL,
                                               p_os_user text DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_existing redrive.bulk_operation%ROWTYPE;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    IF p_bulk_id IS NULL THEN
        RAISE EXCEPTION 'a bulk id is required' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF p_action IS NULL OR p_action NOT IN ('requeue', 'resolve') THEN
        RAISE EXCEPTION 'bulk action must be requeue or resolve' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_chunk_size IS NULL OR p_chunk_size < 1 OR p_chunk_size > redrive.max_targets_per_call() THEN
        RAISE EXCEPTION 'chunk size must be between 1 and %', redrive.max_targets_per_call()
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The frozen options are what every chunk must carry: all of the action's options.
    IF p_action = 'requeue' AND jsonb_typeof(p_params -> 'reset_attempts') IS DISTINCT FROM 'boolean'
       OR p_action = 'resolve'
          AND (coalesce(p_params ->> 'resolution', '') NOT IN ('fixed_by_hand', 'duplicate',
                                                               'not_needed')
               OR NOT p_params ? 'note') THEN
        RAISE EXCEPTION 'a bulk % must freeze its options: %', p_action,
                        CASE p_action WHEN 'requeue' THEN '{"reset_attempts": true|false}'
                                      ELSE '{"resolution": "fixed_by_hand|duplicate|not_needed", '
                                           '"note": text or null}'
                        END
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM redrive.require_targets(p_targets, 1000000);
    INSERT INTO redrive.bulk_operation (bulk_id, action, os_user, targets, target_count,
                                        chunk_size, params, reason, ticket)
    VALUES (p_bulk_id, p_action, p_os_user, p_targets, jsonb_array_length(p_targets),
            p_chunk_size, p_params, p_reason, p_ticket)
    ON CONFLICT (bulk_id) DO NOTHING;
    SELECT * INTO v_existing FROM redrive.bulk_operation WHERE bulk_id = p_bulk_id;
    IF v_existing.actor <> session_user OR v_existing.targets <> p_targets
       OR v_existing.action <> p_action OR v_existing.chunk_size <> p_chunk_size
       OR v_existing.params <> p_params OR v_existing.reason <> p_reason
       OR v_existing.ticket IS DISTINCT FROM p_ticket
       OR v_existing.os_user IS DISTINCT FROM p_os_user THEN
        RAISE EXCEPTION 'bulk % was frozen with another target list or by another operator',
              p_bulk_id USING ERRCODE = 'unique_violation';
    END IF;
    RETURN v_existing.target_count;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The worker carries out only what an operator ordered (docs/security.md "A compromised
-- worker"). Outbox rows record which worker claimed them; the worker functions act on a claimed
-- row, never on an id the worker names, and audit every change to a dead letter or compensation
-- with the worker's login as actor.
ALTER TABLE redrive.outbox ADD COLUMN claimed_by text,
                           ADD COLUMN claimed_login text;
COMMENT ON COLUMN redrive.outbox.claimed_login IS
    'The login that claimed the command: only it may carry it out (claimed_by is its worker id)';

CREATE OR REPLACE FUNCTION redrive.claim_outbox(p_worker text, p_limit integer,
                                                p_lease_ms integer,
                                                p_now timestamptz DEFAULT NULL)
RETURNS SETOF redrive.outbox
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
BEGIN
    RETURN QUERY
    UPDATE redrive.outbox AS o
       SET status = 'processing', attempts = o.attempts + 1, claimed_by = p_worker,
           claimed_login = session_user,
           locked_until = v_now + p_lease_ms * interval '1 millisecond'
     WHERE o.id IN (SELECT id FROM redrive.outbox
                     WHERE available_at <= v_now
                       -- A live claim is never taken over by naming a later "now".
                       AND (status = 'pending'
                            OR (status = 'processing'
                                AND locked_until < least(v_now, clock_timestamp())))
                     ORDER BY available_at, id
                     LIMIT p_limit
                       FOR UPDATE SKIP LOCKED)
    RETURNING o.*;
END
$$;

-- The outbox row p_outbox if this worker holds its claim and it carries p_command; raises
-- otherwise. Locks the row.
CREATE FUNCTION redrive.claimed_outbox(p_outbox bigint, p_worker text, p_command text)
RETURNS redrive.outbox
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o redrive.outbox%ROWTYPE;
BEGIN
    SELECT * INTO o FROM redrive.outbox WHERE id = p_outbox FOR UPDATE;
    IF NOT FOUND OR o.status <> 'processing' OR o.claimed_by IS DISTINCT FROM p_worker
       OR o.claimed_login IS DISTINCT FROM session_user OR o.command <> p_command THEN
        RAISE EXCEPTION 'outbox command % is not a % this worker claimed', p_outbox, p_command
              USING ERRCODE = 'insufficient_privilege',
                    HINT = 'A worker carries out only the outbox commands it claimed.';
    END IF;
    RETURN o;
END
$$;

-- An audit entry written by the worker (its login is the entry's db_user).
CREATE FUNCTION redrive.audit_worker_change(p_worker text, p_action text, p_action_id uuid,
                                            p_targets jsonb, p_before jsonb, p_after jsonb,
                                            p_reason text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    INSERT INTO redrive.audit_log (os_user, action, targets, reason, before, after, action_id,
                                   outcome)
    VALUES (p_worker, p_action, p_targets, p_reason, p_before, p_after,
            coalesce(p_action_id, gen_random_uuid()),
            jsonb_build_object('actor', 'worker', 'worker_id', p_worker));
END;

DROP FUNCTION redrive.finish_outbox(bigint, boolean, text, bigint, timestamptz);
CREATE FUNCTION redrive.finish_outbox(p_id bigint, p_worker text, p_ok boolean, p_error text,
                                      p_retry_ms bigint DEFAULT 5000,
                                      p_now timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM redrive.claimed_outbox(p_id, p_worker,
                                   (SELECT command FROM redrive.outbox WHERE id = p_id));
    UPDATE redrive.outbox
       SET status = CASE WHEN p_ok THEN 'done' WHEN attempts >= 10 THEN 'failed' ELSE 'pending' END,
           last_error = p_error, locked_until = NULL,
           processed_at = CASE WHEN p_ok THEN coalesce(p_now, clock_timestamp()) END,
           available_at = coalesce(p_now, clock_timestamp()) + p_retry_ms * interval '1 millisecond'
     WHERE id = p_id;
END
$$;

-- Apply the requeue command p_outbox that this worker claimed: the job goes back to the queue
-- with its history kept, the attempt counter reset or kept and the payload replaced only as the
-- operator's command says. False (nothing changed) when the job is not dead or its dead letter
-- is no longer waiting for this requeue (resolved meanwhile).
DROP FUNCTION redrive.apply_requeue(bigint, boolean, jsonb, timestamptz);
CREATE FUNCTION redrive.apply_requeue(p_outbox bigint, p_worker text,
                                      p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
    o redrive.outbox%ROWTYPE;
    v_job bigint;
    v_dead_letter bigint;
    v_reset boolean;
    v_payload jsonb;
BEGIN
    o := redrive.claimed_outbox(p_outbox, p_worker, 'requeue');
    v_job := (o.payload ->> 'job_id')::bigint;
    v_dead_letter := (o.payload ->> 'dead_letter_id')::bigint;
    v_reset := coalesce((o.payload ->> 'reset_attempts')::boolean, true);
    v_payload := o.payload -> 'payload';
    PERFORM 1 FROM redrive.dead_letter
     WHERE id = v_dead_letter AND job_id = v_job AND status = 'requeued' FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE redrive.job
       SET state = 'queued', run_at = v_now,
           attempt = CASE WHEN v_reset THEN 0 ELSE attempt END,
           max_attempts = CASE WHEN v_reset THEN max_attempts
                               ELSE greatest(max_attempts, attempt + 1) END,
           deadline_at = v_now + (coalesce(deadline_at, v_now) - created_at),
           payload = coalesce(v_payload, payload), updated_at = v_now
     WHERE id = v_job AND state = 'dead';
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM redrive.audit_worker_change(
        p_worker, 'worker_requeue_applied', o.action_id,
        jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', v_dead_letter,
                                             'result', 'applied'),
                          jsonb_build_object('type', 'job', 'id', v_job, 'result', 'applied')),
        jsonb_build_object('job_state', 'dead'),
        jsonb_build_object('job_state', 'queued', 'reset_attempts', v_reset,
                           'payload_replaced', v_payload IS NOT NULL),
        format('carried out outbox command %s', o.id));
    RETURN true;
END
$$;

-- The worker's side of a compensation it claimed from the outbox: done (compensated, with the
-- provider's reference) or failed. Audited with the worker as actor.
DROP FUNCTION redrive.complete_compensation(bigint, boolean, text, text);
CREATE FUNCTION redrive.complete_compensation(p_outbox bigint, p_worker text, p_ok boolean,
                                              p_provider_ref text, p_error text)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o redrive.outbox%ROWTYPE;
    c redrive.compensation_request%ROWTYPE;
BEGIN
    o := redrive.claimed_outbox(p_outbox, p_worker, 'compensate');
    IF p_ok IS NULL OR (p_ok AND coalesce(btrim(p_provider_ref), '') = '') THEN
        RAISE EXCEPTION 'a completed compensation needs the provider''s reference'
              USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO c FROM redrive.compensation_request
     WHERE id = (o.payload ->> 'compensation_id')::bigint FOR UPDATE;
    IF NOT FOUND OR c.status NOT IN ('approved', 'executing') THEN
        RETURN;
    END IF;
    UPDATE redrive.compensation_request
       SET status = CASE WHEN p_ok THEN 'done' ELSE 'failed' END, provider_ref = p_provider_ref,
           error_message = p_error, completed_at = clock_timestamp(), version = version + 1
     WHERE id = c.id;
    -- A failure reopens the target only if no other request on it is open (as a rejection);
    -- the target is locked first, so a request filed meanwhile is seen.
    PERFORM redrive.lock_compensation_target(c.target_type, c.target_id);
    IF p_ok OR NOT redrive.other_open_compensation(c.target_type, c.target_id, c.id) THEN
        IF c.target_type = 'dead_letter' THEN
            UPDATE redrive.dead_letter
               SET status = CASE WHEN p_ok THEN 'compensated' ELSE 'open' END,
                   resolution = CASE WHEN p_ok THEN 'compensated' END,
                   resolved_at = CASE WHEN p_ok THEN clock_timestamp() END,
                   resolved_by = CASE WHEN p_ok THEN c.requested_by END
             WHERE id = c.target_id AND status IN ('compensation_pending', 'compensating');
        ELSE
            UPDATE redrive.reconciliation_mismatch
               SET status = CASE WHEN p_ok THEN 'compensated' ELSE 'open' END,
                   version = version + 1
             WHERE id = c.target_id AND status = 'compensation_pending';
        END IF;
    END IF;
    PERFORM redrive.audit_worker_change(
        p_worker, CASE WHEN p_ok THEN 'worker_compensation_done' ELSE 'worker_compensation_failed' END,
        o.action_id,
        jsonb_build_array(jsonb_build_object('type', 'compensation', 'id', c.id,
                                             'result', 'applied'),
                          jsonb_build_object('type', c.target_type, 'id', c.target_id,
                                             'result', 'applied')),
        jsonb_build_object('status', c.status),
        jsonb_build_object('status', CASE WHEN p_ok THEN 'done' ELSE 'failed' END,
                           'provider_ref', p_provider_ref, 'error', p_error),
        format('carried out outbox command %s', o.id));
END
$$;

-- Record the end of an attempt (as in version 2), except that a dead letter is only reopened
-- when it was waiting for this job's requeue: a resolved or compensated one stays as the
-- operator left it. A requeued dead letter that succeeds or fails again is audited with the
-- worker as actor.
CREATE OR REPLACE FUNCTION redrive.finish_attempt(
    p_job bigint, p_worker text, p_started_at timestamptz, p_finished_at timestamptz,
    p_outcome text, p_error_class text, p_error_code text, p_message text, p_stack_trace text,
    p_next text, p_backoff_ms bigint, p_dead_reason text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_job redrive.job%ROWTYPE;
    v_attempts integer;
    v_requeued redrive.dead_letter%ROWTYPE;
    v_action_id uuid;
BEGIN
    SELECT * INTO v_job FROM redrive.job WHERE id = p_job FOR UPDATE;
    IF NOT FOUND OR v_job.state <> 'running' OR v_job.locked_by IS DISTINCT FROM p_worker
       OR v_job.locked_login <> session_user THEN
        RETURN 'lost_lease';
    END IF;
    IF p_next NOT IN ('succeeded', 'retry', 'dead') THEN
        RAISE EXCEPTION 'finish_attempt: unknown next state %', p_next USING ERRCODE = '22023';
    END IF;

    INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,
                                 error_class, error_code, message, stack_trace, worker_id,
                                 backoff_ms)
    VALUES (p_job, v_job.attempt, p_started_at, p_finished_at, p_outcome, p_error_class,
            p_error_code, p_message, p_stack_trace, p_worker,
            CASE WHEN p_next = 'retry' THEN p_backoff_ms END);

    IF p_next IN ('succeeded', 'dead') THEN
        SELECT * INTO v_requeued FROM redrive.dead_letter
         WHERE job_id = p_job AND status = 'requeued' FOR UPDATE;
        IF FOUND THEN
            SELECT o.action_id INTO v_action_id FROM redrive.outbox o
             WHERE o.command = 'requeue' AND o.target_type = 'job'
               AND o.target_id = p_job::text
             ORDER BY o.id DESC LIMIT 1;
        END IF;
    END IF;

    IF p_next = 'succeeded' THEN
        UPDATE redrive.job
           SET state = 'succeeded', locked_by = NULL, locked_login = NULL, locked_until = NULL,
               last_error = NULL,
               updated_at = p_finished_at
         WHERE id = p_job;
        IF v_requeued.id IS NOT NULL THEN
            UPDATE redrive.dead_letter
               SET status = 'resolved', resolution = 'succeeded_after_requeue',
                   resolved_by = p_worker, resolved_at = p_finished_at
             WHERE id = v_requeued.id;
            PERFORM redrive.audit_worker_change(
                p_worker, 'worker_succeeded_after_requeue', v_action_id,
                jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', v_requeued.id,
                                                     'version', v_requeued.version,
                                                     'result', 'applied')),
                jsonb_build_object('status', 'requeued'),
                jsonb_build_object('status', 'resolved', 'resolution', 'succeeded_after_requeue'),
                format('attempt %s of job %s succeeded', v_job.attempt, p_job));
        END IF;
    ELSIF p_next = 'retry' THEN
        UPDATE redrive.job
           SET state = 'queued', locked_by = NULL, locked_until = NULL, last_error = p_message,
               run_at = p_finished_at + p_backoff_ms * interval '1 millisecond',
               updated_at = p_finished_at
         WHERE id = p_job;
    ELSE
        UPDATE redrive.job
           SET state = 'dead', locked_by = NULL, locked_until = NULL, last_error = p_message,
               updated_at = p_finished_at
         WHERE id = p_job;
        SELECT count(*) INTO v_attempts FROM redrive.attempt WHERE job_id = p_job;
        INSERT INTO redrive.dead_letter AS d
               (job_id, queue, kind, reason, error_class, error_code, last_error, stack_trace,
                attempts, idempotency_key, dead_at, fingerprint)
        VALUES (p_job, v_job.queue, v_job.kind, coalesce(p_dead_reason, 'exhausted'),
                p_error_class, p_error_code, p_message, p_stack_trace, v_attempts,
                v_job.idempotency_key, p_finished_at, '')
        ON CONFLICT (job_id) DO UPDATE
           SET status = 'open', reason = EXCLUDED.reason, error_class = EXCLUDED.error_class,
               error_code = EXCLUDED.error_code, last_error = EXCLUDED.last_error,
               stack_trace = EXCLUDED.stack_trace, attempts = EXCLUDED.attempts,
               dead_at = EXCLUDED.dead_at, resolution = NULL, resolved_by = NULL,
               resolved_at = NULL
         WHERE d.status = 'requeued';
        IF v_requeued.id IS NOT NULL THEN
            PERFORM redrive.audit_worker_change(
                p_worker, 'worker_dead_again', v_action_id,
                jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', v_requeued.id,
                                                     'version', v_requeued.version,
                                                     'result', 'applied')),
                jsonb_build_object('status', 'requeued'),
                jsonb_build_object('status', 'open', 'error_class', p_error_class,
                                   'error_code', p_error_code),
                format('job %s failed again after its requeue (attempt %s)', p_job,
                       v_job.attempt));
        END IF;
    END IF;
    RETURN 'recorded';
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Settings change only through an audited function for redrive_admin; a change made any other
-- way (the owner with psql) is audited by the trigger too, as a direct change.
CREATE FUNCTION redrive.change_setting(p_action_id uuid, p_name text, p_value text,
                                       p_reason text, p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_before redrive.settings%ROWTYPE;
    v_cents bigint;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_admin']);
    PERFORM redrive.require_reason(p_reason);
    IF p_name IS DISTINCT FROM 'compensation_approval_cents' THEN
        RAISE EXCEPTION 'unknown setting %', p_name USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Settings: compensation_approval_cents.';
    END IF;
    IF p_value IS NULL OR p_value !~ '^[0-9]{1,15}$' THEN
        RAISE EXCEPTION 'compensation_approval_cents must be a whole number of minor units'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_cents := p_value::bigint;
    v_prev := redrive.begin_action(p_action_id, 'change_setting', p_os_user, NULL,
                                   jsonb_build_object('name', p_name, 'value', p_value,
                                                      'reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO v_before FROM redrive.settings FOR UPDATE;
    UPDATE redrive.settings SET compensation_approval_cents = v_cents;
    RETURN redrive.finish_action(
        p_action_id, 'change_setting',
        jsonb_build_array(jsonb_build_object('type', 'setting', 'id', p_name,
                                             'result', 'applied')),
        p_reason, NULL, p_os_user,
        jsonb_build_object(p_name, v_before.compensation_approval_cents),
        jsonb_build_object(p_name, v_cents),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0));
END
$$;

CREATE FUNCTION redrive.settings_refuse_truncate() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'redrive.settings is never truncated; change a setting with redrive.change_setting'
          USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE FUNCTION redrive.settings_audit_direct_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Inside redrive.change_setting the action's own entry records it: that call claimed an
    -- unfinished change_setting action in this very transaction (a session setting could be
    -- set by anyone, so it is not what decides).
    IF NOT EXISTS (SELECT 1 FROM redrive.operator_action o
                    WHERE o.action = 'change_setting' AND o.outcome IS NULL
                      AND o.xmin = xid(pg_current_xact_id())) THEN
        INSERT INTO redrive.audit_log (action, targets, reason, before, after, action_id,
                                       outcome)
        VALUES ('settings_changed_directly',
                '[{"type": "setting", "id": "settings", "result": "applied"}]',
                format('%s outside redrive.change_setting', lower(TG_OP)),
                CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,
                CASE WHEN TG_OP IN ('UPDATE', 'INSERT') THEN to_jsonb(NEW) END,
                gen_random_uuid(), '{"confirmed": 1, "applied": 1}');
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER settings_audit_direct_change
    AFTER INSERT OR UPDATE OR DELETE ON redrive.settings
    FOR EACH ROW EXECUTE FUNCTION redrive.settings_audit_direct_change();
CREATE TRIGGER settings_no_truncate
    BEFORE TRUNCATE ON redrive.settings
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.settings_refuse_truncate();

-- ---------------------------------------------------------------------------------------------
-- Notifications carry no data: LISTEN needs no privilege, so anyone who can connect hears them
-- (and anyone can send one). The console takes a notification only as a hint to re-read through
-- the role-checked views. Identical payloads in one transaction are delivered once.
CREATE OR REPLACE FUNCTION redrive.dead_letter_notify() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM pg_notify('redrive_dead_letter', '');
    RETURN NULL;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Grants.
REVOKE ALL ON FUNCTION redrive.max_targets_per_call(),
                       redrive.require_targets(jsonb, integer),
                       redrive.begin_action(uuid, text, text, jsonb, jsonb, uuid, integer),
                       redrive.audit_targets(text, jsonb),
                       redrive.claimed_outbox(bigint, text, text),
                       redrive.audit_worker_change(text, text, uuid, jsonb, jsonb, jsonb, text),
                       redrive.finish_outbox(bigint, text, boolean, text, bigint, timestamptz),
                       redrive.apply_requeue(bigint, text, timestamptz),
                       redrive.complete_compensation(bigint, text, boolean, text, text),
                       redrive.change_setting(uuid, text, text, text, text),
                       redrive.settings_audit_direct_change(),
                       redrive.lock_compensation_target(text, bigint),
                       redrive.other_open_compensation(text, bigint, bigint),
                       redrive.settings_refuse_truncate()
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.max_targets_per_call()
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_admin;
GRANT EXECUTE ON FUNCTION redrive.finish_outbox(bigint, text, boolean, text, bigint, timestamptz),
                          redrive.apply_requeue(bigint, text, timestamptz),
                          redrive.complete_compensation(bigint, text, boolean, text, text)
    TO redrive_worker;
GRANT EXECUTE ON FUNCTION redrive.change_setting(uuid, text, text, text, text) TO redrive_admin;
GRANT SELECT ON redrive.settings TO redrive_admin;

-- Every action waits at most 10 s for a row another session holds (a worker's job row, a key,
-- an outbox row) and then fails with lock_not_available, instead of waiting for as long as that
-- session keeps its transaction open.
ALTER FUNCTION redrive.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.claim_dead_letters(uuid, jsonb, boolean, text, text) SET lock_timeout = '10s';
ALTER FUNCTION redrive.add_note(uuid, text, text, text, text) SET lock_timeout = '10s';
ALTER FUNCTION redrive.release_idempotency_key(uuid, text, text, integer, text, text, text)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.resolve_mismatch(uuid, bigint, integer, text, text, text, text)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.request_compensation(uuid, text, bigint, integer, text, bigint, text, text, text)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.decide_compensation(uuid, bigint, integer, boolean, text, text)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.freeze_bulk(uuid, text, jsonb, integer, jsonb, text, text, text)
    SET lock_timeout = '10s';
ALTER FUNCTION redrive.change_setting(uuid, text, text, text, text) SET lock_timeout = '10s';

-- ---------------------------------------------------------------------------------------------
-- Job and idempotency-key leases are bound to the login that took them, as outbox claims are:
-- worker ids are labels a worker chooses, so another worker login naming the same id cannot
-- heartbeat, defer or finish a job it does not hold, nor complete its key; and a live lease is
-- never taken over by passing a later p_now (the reference worker's virtual time lies in the
-- past, so clamping takeovers to the server clock changes nothing for it). Leases taken before
-- this version (locked_login NULL) stay usable by their worker.
ALTER TABLE redrive.job ADD COLUMN locked_login text;
ALTER TABLE redrive.idempotency_key ADD COLUMN locked_login text;

CREATE OR REPLACE FUNCTION redrive.claim_jobs(p_worker text, p_queues text[], p_limit integer,
                                   p_lease_ms integer, p_now timestamptz DEFAULT NULL)
RETURNS SETOF redrive.job
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- Capped at a minute past the server clock: a later "now" neither claims jobs long before
    -- they are due nor takes a lease that outlives the worker (virtual time in the past, and the
    -- reference worker's second ahead, are kept as they are).
    v_now timestamptz := least(coalesce(p_now, clock_timestamp()), clock_timestamp() + interval '1 minute');
BEGIN
    RETURN QUERY
    UPDATE redrive.job AS j
       SET state = 'running', attempt = j.attempt + 1, locked_by = p_worker,
           locked_login = session_user,
           locked_until = v_now + p_lease_ms * interval '1 millisecond', heartbeat_at = v_now,
           updated_at = v_now
     WHERE j.id IN (SELECT id FROM redrive.job
                     WHERE state = 'queued' AND queue = ANY (p_queues) AND run_at <= v_now
                     ORDER BY run_at, id
                     LIMIT p_limit
                       FOR UPDATE SKIP LOCKED)
    RETURNING j.*;
END
$$;

CREATE OR REPLACE FUNCTION redrive.heartbeat_job(p_job bigint, p_worker text, p_lease_ms integer,
                                      p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_until timestamptz := least(coalesce(p_now, clock_timestamp()), clock_timestamp() + interval '1 minute')
                           + p_lease_ms * interval '1 millisecond';
BEGIN
    UPDATE redrive.job
       SET locked_until = v_until, heartbeat_at = coalesce(p_now, clock_timestamp())
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

CREATE OR REPLACE FUNCTION redrive.defer_job(p_job bigint, p_worker text, p_delay_ms bigint,
                                  p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH touched AS (
        UPDATE redrive.job
           SET state = 'queued', attempt = attempt - 1, locked_by = NULL, locked_until = NULL,
               run_at = coalesce(p_now, clock_timestamp()) + p_delay_ms * interval '1 millisecond',
               updated_at = coalesce(p_now, clock_timestamp())
         WHERE id = p_job AND state = 'running' AND locked_by = p_worker
           AND (locked_login IS NULL OR locked_login = session_user)
        RETURNING 1)
    SELECT count(*) = 1 FROM touched;
END;

CREATE OR REPLACE FUNCTION redrive.reclaim_expired_leases(p_worker text, p_now timestamptz DEFAULT NULL)
RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
    v_job redrive.job%ROWTYPE;
    v_message text;
BEGIN
    FOR v_job IN
        SELECT * FROM redrive.job
         -- A live lease is never taken over by naming a later "now".
         WHERE state = 'running' AND locked_until < least(v_now, clock_timestamp())
         ORDER BY locked_until
           FOR UPDATE SKIP LOCKED
    LOOP
        v_message := format('lease of worker %s expired at %s without a result',
                            v_job.locked_by, v_job.locked_until);
        -- Record as the worker that lost it, then decide as this worker.
        UPDATE redrive.job SET locked_by = p_worker, locked_login = session_user
         WHERE id = v_job.id;
        PERFORM redrive.finish_attempt(
            v_job.id, p_worker, coalesce(v_job.heartbeat_at, v_job.locked_until),
            greatest(v_now, coalesce(v_job.heartbeat_at, v_job.locked_until)), 'abandoned',
            'ambiguous', 'lease_expired', v_message, NULL,
            CASE WHEN v_job.attempt >= v_job.max_attempts THEN 'dead' ELSE 'retry' END,
            0, 'ambiguous');
        UPDATE redrive.attempt SET worker_id = v_job.locked_by
         WHERE id = (SELECT max(id) FROM redrive.attempt WHERE job_id = v_job.id);
        RETURN NEXT v_job.id;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION redrive.begin_idempotent(p_scope text, p_key text, p_request_hash text,
                                         p_job bigint, p_worker text, p_lease_ms integer,
                                         p_now timestamptz DEFAULT NULL,
                                         OUT verdict text, OUT result jsonb)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := least(coalesce(p_now, clock_timestamp()), clock_timestamp() + interval '1 minute');
    v_lease timestamptz := v_now + p_lease_ms * interval '1 millisecond';
    v_rec redrive.idempotency_key%ROWTYPE;
BEGIN
    INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id, locked_by,
                                         locked_login, locked_until, created_at, updated_at,
                                         expires_at)
    VALUES (p_scope, p_key, p_request_hash, 'processing', p_job, p_worker, session_user,
            v_lease, v_now, v_now, v_now + interval '7 days')
    ON CONFLICT (scope, key) DO NOTHING;
    IF FOUND THEN
        verdict := 'proceed';
        RETURN;
    END IF;

    SELECT * INTO v_rec FROM redrive.idempotency_key
     WHERE scope = p_scope AND key = p_key FOR UPDATE;
    IF v_rec.request_hash <> p_request_hash THEN
        UPDATE redrive.idempotency_key
           SET conflicting_hash = p_request_hash, conflict_count = conflict_count + 1,
               last_conflict_at = v_now, version = version + 1
         WHERE scope = p_scope AND key = p_key;
        verdict := 'mismatch';
    ELSIF v_rec.state = 'done' THEN
        verdict := 'replay';
        result := v_rec.result;
    -- A live lease is never taken over by naming a later "now".
    ELSIF v_rec.state = 'processing' AND v_rec.locked_until > least(v_now, clock_timestamp()) THEN
        verdict := 'conflict';
    ELSE
        verdict := CASE WHEN v_rec.state = 'processing' THEN 'takeover' ELSE 'proceed' END;
        UPDATE redrive.idempotency_key
           SET state = 'processing', locked_by = p_worker, locked_login = session_user,
               locked_until = v_lease,
               job_id = coalesce(p_job, job_id), updated_at = v_now, version = version + 1
         WHERE scope = p_scope AND key = p_key;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION redrive.complete_idempotent(p_scope text, p_key text, p_worker text,
                                            p_state text, p_result jsonb, p_error text,
                                            p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH touched AS (
        UPDATE redrive.idempotency_key
           SET state = p_state, result = CASE WHEN p_state = 'done' THEN p_result END,
               error_message = p_error, locked_by = NULL, locked_login = NULL, locked_until = NULL,
               updated_at = coalesce(p_now, clock_timestamp()), version = version + 1
         WHERE scope = p_scope AND key = p_key AND locked_by = p_worker
           AND (locked_login IS NULL OR locked_login = session_user)
           AND state = 'processing' AND p_state IN ('done', 'failed')
        RETURNING 1)
    SELECT count(*) = 1 FROM touched;
END;
