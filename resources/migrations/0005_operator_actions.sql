-- Redrive native schema, version 5: operator actions under audit (DESIGN §3; issue 5).
-- Every action is one call of a SECURITY DEFINER function with a pinned search_path: it checks
-- the caller's Redrive role, checks each target is still at the version the operator saw,
-- applies the change, writes outbox rows for side effects and appends the audit entry, all in
-- the caller's one transaction. A repeated action id returns the first outcome and changes
-- nothing. Bulk actions act on the exact list they are given; chunks of one bulk share a bulk id.

-- ---------------------------------------------------------------------------------------------
-- Settings and the payments contract.
CREATE TABLE redrive.settings (
    singleton                     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    compensation_approval_cents   bigint  NOT NULL DEFAULT 10000
                                  CHECK (compensation_approval_cents >= 0)
);
INSERT INTO redrive.settings DEFAULT VALUES;
COMMENT ON COLUMN redrive.settings.compensation_approval_cents IS
    'Compensations at or above this amount wait for a second person (maker-checker)';

-- What was charged and refunded for a payment. A deployment points this view at its ledger;
-- the reference worker's simulated world replaces it with one over its own tables.
CREATE VIEW redrive.payment_list AS
SELECT NULL::text AS payment_ref, NULL::text AS charge_ref, NULL::bigint AS charged_cents,
       NULL::bigint AS refunded_cents, NULL::text AS currency
 WHERE false;

-- ---------------------------------------------------------------------------------------------
-- Actions taken, by action id: the idempotency record of the console's own requests.
CREATE TABLE redrive.operator_action (
    action_id   uuid        PRIMARY KEY,
    action      text        NOT NULL,
    actor       text        NOT NULL DEFAULT session_user,
    os_user     text,
    bulk_id     uuid,
    chunk_no    integer,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    outcome     jsonb,
    audit_id    bigint
);
CREATE INDEX operator_action_bulk_idx ON redrive.operator_action (bulk_id, chunk_no)
    WHERE bulk_id IS NOT NULL;

-- A bulk action's frozen target list (the ids and versions the operator confirmed at preview),
-- so that a cancelled or crashed bulk can be resumed on exactly the same set.
CREATE TABLE redrive.bulk_operation (
    bulk_id     uuid        PRIMARY KEY,
    action      text        NOT NULL,
    actor       text        NOT NULL DEFAULT session_user,
    os_user     text,
    targets     jsonb       NOT NULL,
    target_count integer    NOT NULL,
    chunk_size  integer     NOT NULL CHECK (chunk_size > 0),
    params      jsonb       NOT NULL DEFAULT '{}',
    reason      text        NOT NULL,
    ticket      text,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- ---------------------------------------------------------------------------------------------
-- Helpers (not granted to anyone: only the action functions call them).
CREATE FUNCTION redrive.require_role(p_roles text[]) RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM unnest(p_roles) r
                    WHERE pg_has_role(session_user, r, 'MEMBER')) THEN
        RAISE EXCEPTION 'permission denied: this action needs one of the roles %',
                        array_to_string(p_roles, ', ')
              USING ERRCODE = 'insufficient_privilege',
                    HINT = 'Ask an administrator to GRANT the role to your login.';
    END IF;
END
$$;

CREATE FUNCTION redrive.require_reason(p_reason text) RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_reason IS NULL OR length(btrim(p_reason)) < 3 THEN
        RAISE EXCEPTION 'a reason is required' USING ERRCODE = 'check_violation',
              HINT = 'Say why, in a few words; it goes into the audit log.';
    END IF;
END
$$;

-- Claims an action id. Returns the stored outcome when it was used before (the caller returns it
-- unchanged), or NULL when the action is new. A concurrent call with the same id waits for the
-- first to commit, then sees its outcome.
CREATE FUNCTION redrive.claim_action_id(p_action_id uuid, p_action text, p_os_user text,
                                        p_bulk_id uuid, p_chunk_no integer)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev redrive.operator_action%ROWTYPE;
BEGIN
    IF p_action_id IS NULL THEN
        RAISE EXCEPTION 'an action id is required' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    INSERT INTO redrive.operator_action (action_id, action, os_user, bulk_id, chunk_no)
    VALUES (p_action_id, p_action, p_os_user, p_bulk_id, p_chunk_no)
    ON CONFLICT (action_id) DO NOTHING;
    IF FOUND THEN
        RETURN NULL;
    END IF;
    SELECT * INTO v_prev FROM redrive.operator_action WHERE action_id = p_action_id;
    IF v_prev.action <> p_action THEN
        RAISE EXCEPTION 'action id % was already used for %', p_action_id, v_prev.action
              USING ERRCODE = 'unique_violation';
    END IF;
    RETURN v_prev.outcome || jsonb_build_object('replayed', true);
END
$$;

-- Appends the audit entry and stores the outcome with the action id. Returns the outcome.
CREATE FUNCTION redrive.finish_action(p_action_id uuid, p_action text, p_targets jsonb,
                                      p_reason text, p_ticket text, p_os_user text,
                                      p_before jsonb, p_after jsonb, p_outcome jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_audit bigint;
    v_outcome jsonb := p_outcome || jsonb_build_object('action_id', p_action_id,
                                                       'replayed', false);
BEGIN
    INSERT INTO redrive.audit_log (os_user, action, targets, reason, ticket, before, after,
                                   action_id, outcome)
    VALUES (p_os_user, p_action, coalesce(p_targets, '[]'), p_reason, p_ticket, p_before,
            p_after, p_action_id, p_outcome)
    RETURNING id INTO v_audit;
    v_outcome := v_outcome || jsonb_build_object('audit_id', v_audit);
    UPDATE redrive.operator_action SET outcome = v_outcome, audit_id = v_audit
     WHERE action_id = p_action_id;
    RETURN v_outcome;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Requeue dead letters (roles: oncall). p_targets: [{"id": 1, "version": 3}, ...] exactly as
-- confirmed. The outcome counts confirmed, applied, conflicts and refused, and lists in
-- "results" only the targets that were not applied (the applied ones are the audit targets). Per target: applied, conflict (changed since the preview), refused (the job is
-- leased, or its lease expired without a release) or not_found. The job goes back to its queue
-- through an outbox command the worker relays; earlier attempts are kept.
CREATE FUNCTION redrive.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
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
    v_ids bigint[];
    v_applied bigint[];
    v_targets jsonb;
    v_before jsonb;
    v_results jsonb;
    v_conflicts integer;
    v_refused integer;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, 'requeue', p_os_user, p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT array_agg(DISTINCT (e ->> 'id')::bigint) INTO v_ids
      FROM jsonb_array_elements(p_targets) e;
    -- Lock every target and its job in id order, so concurrent bulks cannot deadlock. (IN with
    -- unnest, not = ANY: a parameter array is searched linearly per row by a seq scan.)
    PERFORM 1 FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
     WHERE dl.id IN (SELECT unnest(v_ids)) ORDER BY dl.id FOR UPDATE OF dl, j;
    -- Classify each confirmed target, set-based (one pass, no quadratic jsonb appends).
    WITH t AS (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                      (e ->> 'version')::integer AS version
                 FROM jsonb_array_elements(p_targets) e),
         c AS (SELECT t.id, t.version, dl.version AS now_version, dl.status, j.state,
                      j.locked_by, j.locked_until,
                      CASE WHEN dl.id IS NULL THEN 'not_found'
                           WHEN dl.version <> t.version OR dl.status <> 'open' THEN 'conflict'
                           WHEN j.state = 'running' THEN 'refused'
                           ELSE 'applied' END AS result
                 FROM t LEFT JOIN redrive.dead_letter dl ON dl.id = t.id
                        LEFT JOIN redrive.job j ON j.id = dl.job_id)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.version) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'status', c.status) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object(
                        'id', c.id, 'result', c.result,
                        'detail', CASE c.result
                            WHEN 'conflict' THEN format('now %s at version %s (you saw version %s)',
                                                        c.status, c.now_version, c.version)
                            WHEN 'refused' THEN
                                CASE WHEN c.locked_until > clock_timestamp()
                                     THEN format('job is leased by %s until %s', c.locked_by,
                                                 c.locked_until)
                                     ELSE format('lease of %s expired at %s: release it first',
                                                 c.locked_by, c.locked_until) END END)
                        ORDER BY c.id) FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result IN ('conflict', 'not_found')),
           count(*) FILTER (WHERE c.result = 'refused')
      INTO v_applied, v_targets, v_before, v_results, v_conflicts, v_refused
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
        p_action_id, 'requeue', v_targets, p_reason, p_ticket, p_os_user, v_before,
        jsonb_build_object('status', 'requeued', 'reset_attempts', p_reset_attempts),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', v_refused, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

-- Edit the payload and requeue one dead letter (roles: oncall). The audit entry keeps the
-- payload before and after. jsonb has already rejected text that is not JSON.
CREATE FUNCTION redrive.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
                                         p_version integer, p_payload jsonb,
                                         p_reset_attempts boolean, p_reason text,
                                         p_ticket text DEFAULT NULL, p_os_user text DEFAULT NULL)
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
    v_prev := redrive.claim_action_id(p_action_id, 'edit_and_requeue', p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT dl.id, dl.version, dl.status, dl.job_id, j.state AS job_state, j.payload
      INTO d
      FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
     WHERE dl.id = p_dead_letter FOR UPDATE OF dl, j;
    IF NOT FOUND OR d.version <> p_version OR d.status <> 'open' OR d.job_state = 'running' THEN
        RETURN redrive.finish_action(
            p_action_id, 'edit_and_requeue', '[]', p_reason, p_ticket, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0,
                               'results', jsonb_build_array(jsonb_build_object(
                                   'id', p_dead_letter, 'result', 'conflict'))));
    END IF;
    UPDATE redrive.dead_letter SET status = 'requeued' WHERE id = d.id;
    INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key, action_id)
    VALUES ('requeue', 'job', d.job_id::text,
            jsonb_build_object('job_id', d.job_id, 'dead_letter_id', d.id,
                               'reset_attempts', p_reset_attempts, 'payload', p_payload),
            'requeue:' || p_action_id || ':' || d.id, p_action_id);
    RETURN redrive.finish_action(
        p_action_id, 'edit_and_requeue',
        jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', d.id,
                                             'version', d.version)),
        p_reason, p_ticket, p_os_user, jsonb_build_object('payload', d.payload),
        jsonb_build_object('payload', p_payload),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', d.id, 'result', 'applied'))));
END
$$;

-- Mark dead letters resolved (roles: oncall, support) with a resolution and a note.
CREATE FUNCTION redrive.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
                                             p_resolution text, p_note text, p_reason text,
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
    v_ids bigint[];
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
    v_prev := redrive.claim_action_id(p_action_id, 'resolve', p_os_user, p_bulk_id, p_chunk_no);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT array_agg(DISTINCT (e ->> 'id')::bigint) INTO v_ids
      FROM jsonb_array_elements(p_targets) e;
    PERFORM 1 FROM redrive.dead_letter WHERE id IN (SELECT unnest(v_ids)) ORDER BY id FOR UPDATE;
    WITH t AS (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                      (e ->> 'version')::integer AS version
                 FROM jsonb_array_elements(p_targets) e),
         c AS (SELECT t.id, t.version,
                      CASE WHEN dl.id IS NULL THEN 'not_found'
                           WHEN dl.version <> t.version OR dl.status NOT IN ('open', 'requeued')
                           THEN 'conflict' ELSE 'applied' END AS result
                 FROM t LEFT JOIN redrive.dead_letter dl ON dl.id = t.id)
    SELECT array_agg(c.id ORDER BY c.id) FILTER (WHERE c.result = 'applied'),
           coalesce(jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', c.id,
                                                 'version', c.version) ORDER BY c.id)
                        FILTER (WHERE c.result = 'applied'), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'result', c.result) ORDER BY c.id)
                        FILTER (WHERE c.result <> 'applied'), '[]'),
           count(*) FILTER (WHERE c.result <> 'applied')
      INTO v_applied, v_targets, v_results, v_conflicts
      FROM c;
    UPDATE redrive.dead_letter
       SET status = 'resolved', resolution = p_resolution, resolution_note = p_note,
           resolved_by = session_user, resolved_at = clock_timestamp()
     WHERE id IN (SELECT unnest(v_applied));
    RETURN redrive.finish_action(
        p_action_id, 'resolve', v_targets, p_reason, p_ticket, p_os_user, NULL,
        jsonb_build_object('status', 'resolved', 'resolution', p_resolution, 'note', p_note),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_targets), 'conflicts', v_conflicts,
                           'refused', 0, 'bulk_id', p_bulk_id, 'chunk_no', p_chunk_no,
                           'results', v_results));
END
$$;

-- Claim (or release the claim on) dead letters, so others see who is on them
-- (roles: oncall, support).
CREATE FUNCTION redrive.claim_dead_letters(p_action_id uuid, p_targets jsonb, p_release boolean,
                                           p_reason text, p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    t record;
    d redrive.dead_letter%ROWTYPE;
    v_results jsonb := '[]';
    v_applied jsonb := '[]';
    v_conflicts integer := 0;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, CASE WHEN p_release THEN 'unclaim'
                                                        ELSE 'claim' END, p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    FOR t IN SELECT (e ->> 'id')::bigint AS id, (e ->> 'version')::integer AS version
               FROM jsonb_array_elements(p_targets) e ORDER BY 1
    LOOP
        SELECT * INTO d FROM redrive.dead_letter WHERE id = t.id FOR UPDATE;
        IF NOT FOUND OR d.version <> t.version THEN
            v_results := v_results || jsonb_build_object('id', t.id, 'result', 'conflict');
            v_conflicts := v_conflicts + 1;
            CONTINUE;
        END IF;
        UPDATE redrive.dead_letter
           SET claimed_by = CASE WHEN p_release THEN NULL ELSE session_user END,
               claimed_at = CASE WHEN p_release THEN NULL ELSE clock_timestamp() END
         WHERE id = d.id;
        v_applied := v_applied || jsonb_build_object('type', 'dead_letter', 'id', d.id,
                                                      'version', d.version);
    END LOOP;
    RETURN redrive.finish_action(
        p_action_id, CASE WHEN p_release THEN 'unclaim' ELSE 'claim' END, v_applied, p_reason,
        NULL, p_os_user, NULL, jsonb_build_object('claimed_by',
                                                  CASE WHEN p_release THEN NULL ELSE session_user END),
        jsonb_build_object('confirmed', jsonb_array_length(p_targets),
                           'applied', jsonb_array_length(v_applied), 'conflicts', v_conflicts,
                           'refused', 0, 'results', v_results));
END
$$;

-- A note on a dead letter, mismatch, compensation or key (roles: any operator role). Notes live
-- in the audit log, where nothing is ever changed.
CREATE FUNCTION redrive.add_note(p_action_id uuid, p_target_type text, p_target_id text,
                                 p_note text, p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support', 'redrive_approver']);
    PERFORM redrive.require_reason(p_note);
    v_prev := redrive.claim_action_id(p_action_id, 'note', p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'note',
        jsonb_build_array(jsonb_build_object('type', p_target_type,
                                             'id', CASE WHEN p_target_id ~ '^[0-9]+$'
                                                        THEN to_jsonb(p_target_id::bigint)
                                                        ELSE to_jsonb(p_target_id) END)),
        p_note, NULL, p_os_user, NULL, NULL,
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0));
END
$$;

-- Release a stuck idempotency key (roles: oncall, support): only once its lease has expired.
-- The key becomes failed, so a retry of its job may proceed (and the receiver's own key decides
-- whether the side effect happens again).
CREATE FUNCTION redrive.release_idempotency_key(p_action_id uuid, p_scope text, p_key text,
                                                p_version integer, p_reason text,
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
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, 'release_key', p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO k FROM redrive.idempotency_key WHERE scope = p_scope AND key = p_key FOR UPDATE;
    IF NOT FOUND OR k.version <> p_version OR k.state <> 'processing' THEN
        v_result := 'conflict';
    ELSIF k.locked_until > clock_timestamp() THEN
        v_result := 'refused';
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
        CASE WHEN v_result = 'applied'
             THEN jsonb_build_array(jsonb_build_object('type', 'idempotency_key',
                                                       'id', p_scope || ':' || p_key,
                                                       'version', p_version))
             ELSE '[]' END,
        p_reason, p_ticket, p_os_user,
        CASE WHEN k.key IS NOT NULL THEN jsonb_build_object('state', k.state, 'locked_by',
                                                           k.locked_by, 'locked_until',
                                                           k.locked_until) END,
        CASE WHEN v_result = 'applied' THEN jsonb_build_object('state', 'failed') END,
        jsonb_build_object('confirmed', 1, 'applied', (v_result = 'applied')::int,
                           'conflicts', (v_result = 'conflict')::int,
                           'refused', (v_result = 'refused')::int,
                           'results', jsonb_build_array(jsonb_build_object(
                               'id', p_scope || ':' || p_key, 'result', v_result,
                               'detail', CASE WHEN v_result = 'refused'
                                              THEN format('lease held by %s until %s',
                                                          k.locked_by, k.locked_until) END))));
END
$$;

-- Resolve a reconciliation mismatch (roles: support).
CREATE FUNCTION redrive.resolve_mismatch(p_action_id uuid, p_mismatch bigint, p_version integer,
                                         p_resolution text, p_reason text,
                                         p_ticket text DEFAULT NULL, p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    m redrive.reconciliation_mismatch%ROWTYPE;
    v_ok boolean;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, 'resolve_mismatch', p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO m FROM redrive.reconciliation_mismatch WHERE id = p_mismatch FOR UPDATE;
    v_ok := FOUND AND m.version = p_version AND m.status = 'open';
    IF v_ok THEN
        UPDATE redrive.reconciliation_mismatch
           SET status = 'resolved', resolution = p_resolution, resolved_by = session_user,
               resolved_at = clock_timestamp(), version = version + 1
         WHERE id = p_mismatch;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'resolve_mismatch',
        CASE WHEN v_ok THEN jsonb_build_array(jsonb_build_object('type', 'mismatch',
                                                                 'id', p_mismatch,
                                                                 'version', p_version))
             ELSE '[]' END,
        p_reason, p_ticket, p_os_user, NULL,
        CASE WHEN v_ok THEN jsonb_build_object('status', 'resolved', 'resolution', p_resolution) END,
        jsonb_build_object('confirmed', 1, 'applied', v_ok::int, 'conflicts', (NOT v_ok)::int,
                           'refused', 0));
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Compensation (DESIGN §3 rule 5). The console never calls the provider: an approved request
-- becomes an outbox command that the worker relays with its own idempotency key.

-- What can still be refunded for a payment, in cents: charged, minus refunded at the provider,
-- minus open compensation requests.
CREATE FUNCTION redrive.refundable_cents(p_payment_ref text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(max(p.charged_cents) - max(p.refunded_cents), 0)
           - coalesce((SELECT sum(c.amount_cents) FROM redrive.compensation_request c
                        WHERE c.payment_ref = p_payment_ref
                          AND c.status IN ('pending_approval', 'approved', 'executing')), 0)
      FROM redrive.payment_list p WHERE p.payment_ref = p_payment_ref
$$;

CREATE FUNCTION redrive.request_compensation(p_action_id uuid, p_target_type text,
                                             p_target_id bigint, p_version integer,
                                             p_kind text, p_amount_cents bigint, p_reason text,
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
    v_prev := redrive.claim_action_id(p_action_id, 'compensate_request', p_os_user, NULL, NULL);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    IF p_target_type = 'dead_letter' THEN
        SELECT j.entity_id, dl.version, dl.status INTO v_payment, v_version, v_status
          FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
         WHERE dl.id = p_target_id FOR UPDATE OF dl;
    ELSIF p_target_type = 'mismatch' THEN
        SELECT m.payment_ref, m.version, m.status INTO v_payment, v_version, v_status
          FROM redrive.reconciliation_mismatch m WHERE m.id = p_target_id FOR UPDATE;
    ELSE
        RAISE EXCEPTION 'target type must be dead_letter or mismatch'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- A second kind of compensation may follow a first; a second of the same kind is refused
    -- below by the unique index on open requests, not here.
    IF v_version IS NULL OR v_version <> p_version
       OR v_status NOT IN ('open', 'compensation_pending') THEN
        RETURN redrive.finish_action(
            p_action_id, 'compensate_request', '[]', p_reason, p_ticket, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0));
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
    v_needs_approval := p_amount_cents >= v_threshold;
    -- At most one open compensation per target and kind: the unique index says no to a second.
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
                                             'version', p_version),
                          jsonb_build_object('type', 'compensation', 'id', v_request)),
        p_reason, p_ticket, p_os_user, jsonb_build_object('status', v_status),
        jsonb_build_object('status', 'compensation_pending', 'amount_cents', p_amount_cents,
                           'currency', v_pay.currency, 'kind', p_kind,
                           'requires_approval', v_needs_approval),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'compensation_id', v_request, 'requires_approval', v_needs_approval));
END
$$;

-- Approve or reject a compensation request (roles: approver). The requester can never decide
-- their own request (checked here and by the table's CHECK constraint); approval re-checks the
-- state and that the amount is still refundable.
CREATE FUNCTION redrive.decide_compensation(p_action_id uuid, p_request bigint,
                                            p_version integer, p_approve boolean,
                                            p_reason text, p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    c redrive.compensation_request%ROWTYPE;
    v_pay record;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_approver']);
    PERFORM redrive.require_reason(p_reason);
    v_prev := redrive.claim_action_id(p_action_id, CASE WHEN p_approve THEN 'compensate_approve'
                                                        ELSE 'compensate_reject' END,
                                      p_os_user, NULL, NULL);
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
            p_action_id, CASE WHEN p_approve THEN 'compensate_approve' ELSE 'compensate_reject' END,
            '[]', p_reason, NULL, p_os_user, NULL, NULL,
            jsonb_build_object('confirmed', 1, 'applied', 0, 'conflicts', 1, 'refused', 0));
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
    ELSIF c.target_type = 'dead_letter' THEN
        UPDATE redrive.dead_letter SET status = 'open' WHERE id = c.target_id;
    ELSE
        UPDATE redrive.reconciliation_mismatch SET status = 'open', version = version + 1
         WHERE id = c.target_id;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, CASE WHEN p_approve THEN 'compensate_approve' ELSE 'compensate_reject' END,
        jsonb_build_array(jsonb_build_object('type', 'compensation', 'id', c.id,
                                             'version', c.version),
                          jsonb_build_object('type', c.target_type, 'id', c.target_id)),
        p_reason, NULL, p_os_user, jsonb_build_object('status', c.status),
        jsonb_build_object('status', CASE WHEN p_approve THEN 'approved' ELSE 'rejected' END),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'requested_by', c.requested_by, 'amount_cents', c.amount_cents));
END
$$;

-- The worker's side of a compensation: executing, then done (compensated) or failed.
CREATE FUNCTION redrive.complete_compensation(p_request bigint, p_ok boolean,
                                              p_provider_ref text, p_error text)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c redrive.compensation_request%ROWTYPE;
BEGIN
    SELECT * INTO c FROM redrive.compensation_request WHERE id = p_request FOR UPDATE;
    IF NOT FOUND OR c.status NOT IN ('approved', 'executing') THEN
        RETURN;
    END IF;
    UPDATE redrive.compensation_request
       SET status = CASE WHEN p_ok THEN 'done' ELSE 'failed' END, provider_ref = p_provider_ref,
           error_message = p_error, completed_at = clock_timestamp(), version = version + 1
     WHERE id = c.id;
    IF c.target_type = 'dead_letter' THEN
        UPDATE redrive.dead_letter
           SET status = CASE WHEN p_ok THEN 'compensated' ELSE 'open' END,
               resolution = CASE WHEN p_ok THEN 'compensated' END,
               resolved_at = CASE WHEN p_ok THEN clock_timestamp() END,
               resolved_by = CASE WHEN p_ok THEN c.requested_by END
         WHERE id = c.target_id;
    ELSE
        UPDATE redrive.reconciliation_mismatch
           SET status = CASE WHEN p_ok THEN 'compensated' ELSE 'open' END, version = version + 1
         WHERE id = c.target_id;
    END IF;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Read contract additions: compensation requests with their decision.
CREATE VIEW redrive.compensation_list AS
SELECT c.id, c.target_type, c.target_id, c.kind, c.payment_ref, c.amount_cents, c.currency,
       c.status, c.requires_approval, c.requested_by, c.requested_at, c.reason, c.ticket,
       c.version, c.completed_at, c.provider_ref, c.error_message, a.decided_by, a.decision,
       a.decided_at, a.reason AS decision_reason
  FROM redrive.compensation_request c
  LEFT JOIN redrive.compensation_approval a ON a.request_id = c.id;

-- ---------------------------------------------------------------------------------------------
-- Freeze a bulk action's target list before its first chunk runs (roles: oncall, support). The
-- console then runs chunk n with an action id derived from (bulk id, n), so a resume re-runs
-- every chunk and those already applied only return their first outcome.
CREATE FUNCTION redrive.freeze_bulk(p_bulk_id uuid, p_action text, p_targets jsonb,
                                    p_chunk_size integer, p_params jsonb, p_reason text,
                                    p_ticket text DEFAULT NULL, p_os_user text DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_existing redrive.bulk_operation%ROWTYPE;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    PERFORM redrive.require_reason(p_reason);
    IF p_action NOT IN ('requeue', 'resolve') THEN
        RAISE EXCEPTION 'bulk action must be requeue or resolve' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO redrive.bulk_operation (bulk_id, action, os_user, targets, target_count,
                                        chunk_size, params, reason, ticket)
    VALUES (p_bulk_id, p_action, p_os_user, p_targets, jsonb_array_length(p_targets),
            p_chunk_size, coalesce(p_params, '{}'), p_reason, p_ticket)
    ON CONFLICT (bulk_id) DO NOTHING;
    SELECT * INTO v_existing FROM redrive.bulk_operation WHERE bulk_id = p_bulk_id;
    IF v_existing.actor <> session_user OR v_existing.targets <> p_targets THEN
        RAISE EXCEPTION 'bulk % was frozen with another target list or by another operator',
              p_bulk_id USING ERRCODE = 'unique_violation';
    END IF;
    RETURN v_existing.target_count;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Grants: reading for every Redrive role; each action only for the roles that may take it.
GRANT SELECT ON redrive.settings, redrive.payment_list, redrive.operator_action,
                redrive.bulk_operation, redrive.compensation_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
GRANT SELECT ON redrive.payment_list TO redrive_worker;
REVOKE ALL ON FUNCTION redrive.require_role(text[]), redrive.require_reason(text),
                       redrive.claim_action_id(uuid, text, text, uuid, integer),
                       redrive.finish_action(uuid, text, jsonb, text, text, text, jsonb, jsonb, jsonb),
                       redrive.refundable_cents(text),
                       redrive.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
                       redrive.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text),
                       redrive.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
                       redrive.claim_dead_letters(uuid, jsonb, boolean, text, text),
                       redrive.add_note(uuid, text, text, text, text),
                       redrive.release_idempotency_key(uuid, text, text, integer, text, text, text),
                       redrive.resolve_mismatch(uuid, bigint, integer, text, text, text, text),
                       redrive.request_compensation(uuid, text, bigint, integer, text, bigint, text, text, text),
                       redrive.decide_compensation(uuid, bigint, integer, boolean, text, text),
                       redrive.complete_compensation(bigint, boolean, text, text),
                       redrive.freeze_bulk(uuid, text, jsonb, integer, jsonb, text, text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
                          redrive.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text)
    TO redrive_oncall;
GRANT EXECUTE ON FUNCTION redrive.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
                          redrive.claim_dead_letters(uuid, jsonb, boolean, text, text),
                          redrive.release_idempotency_key(uuid, text, text, integer, text, text, text),
                          redrive.freeze_bulk(uuid, text, jsonb, integer, jsonb, text, text, text)
    TO redrive_oncall, redrive_support;
GRANT EXECUTE ON FUNCTION redrive.resolve_mismatch(uuid, bigint, integer, text, text, text, text),
                          redrive.request_compensation(uuid, text, bigint, integer, text, bigint, text, text, text)
    TO redrive_support;
GRANT EXECUTE ON FUNCTION redrive.decide_compensation(uuid, bigint, integer, boolean, text, text)
    TO redrive_approver;
GRANT EXECUTE ON FUNCTION redrive.add_note(uuid, text, text, text, text)
    TO redrive_oncall, redrive_support, redrive_approver;
GRANT EXECUTE ON FUNCTION redrive.complete_compensation(bigint, boolean, text, text)
    TO redrive_worker;
GRANT EXECUTE ON FUNCTION redrive.refundable_cents(text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
