-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 21: money is named in minor units (docs/domain.md#money).
--
-- Every column, view column, function parameter and JSON key that said `cents` says `minor`:
-- an amount is an integer number of the currency's minor units (yen, cents, fils), and a yen
-- has no cents. The amounts themselves do not change. What stays as it was, on purpose:
--   * redrive.payment_list, the site's own view (docs/domain.md, "The payments contract"):
--     its amount columns keep the names the site gave them. Redrive reads amounts only through
--     redrive.payment_charge_list (whose default reads payment_list's columns by position), so a
--     site view that says charged_cents/refunded_cents and one that says charged_minor/
--     refunded_minor both work, and a site's CREATE OR REPLACE VIEW keeps working.
--   * redrive.refundable_cents(payment), the older name of redrive.refundable_minor(payment).
--   * change_setting('compensation_approval_cents', ...) still changes the setting, now named
--     compensation_approval_minor.
--   * audit entries already written keep their `amount_cents` keys (the chain covers them; the
--     console shows amount_cents and amount_minor as the same key, docs/audit-chain.md).
-- Roles, SECURITY DEFINER, search_path, lock_timeout and grants of every function stay as they
-- were; only request_compensation is dropped and created again, because a parameter cannot be
-- renamed in place.

-- ---------------------------------------------------------------------------------------------
-- Columns. Views and SQL-standard function bodies follow a column by reference; view output
-- columns keep their names until renamed.
ALTER TABLE redrive.compensation_request RENAME COLUMN amount_cents TO amount_minor;
ALTER TABLE redrive.compensation_request
    RENAME CONSTRAINT compensation_request_amount_cents_check
    TO compensation_request_amount_minor_check;
ALTER TABLE redrive.reconciliation_mismatch
    RENAME COLUMN internal_amount_cents TO internal_amount_minor;
ALTER TABLE redrive.reconciliation_mismatch
    RENAME COLUMN external_amount_cents TO external_amount_minor;
ALTER TABLE redrive.settings RENAME COLUMN compensation_approval_cents
    TO compensation_approval_minor;
ALTER TABLE redrive.settings
    RENAME CONSTRAINT settings_compensation_approval_cents_check
    TO settings_compensation_approval_minor_check;
COMMENT ON COLUMN redrive.settings.compensation_approval_minor IS
    'Default approval threshold in minor units (the approval_threshold row "default")';

ALTER VIEW redrive.compensation_list RENAME COLUMN amount_cents TO amount_minor;
ALTER VIEW redrive.mismatch_list RENAME COLUMN internal_amount_cents TO internal_amount_minor;
ALTER VIEW redrive.mismatch_list RENAME COLUMN external_amount_cents TO external_amount_minor;

-- ---------------------------------------------------------------------------------------------
-- request_compensation: p_amount_cents becomes p_amount_minor (drop and create; same owner,
-- SECURITY DEFINER, settings and grants as migration 9 gave it).
DROP FUNCTION redrive.request_compensation(uuid, text, bigint, integer, text, bigint, text, text,
                                           text);
CREATE FUNCTION redrive.request_compensation(p_action_id uuid, p_target_type text, p_target_id bigint, p_version integer, p_kind text, p_amount_minor bigint, p_reason text, p_ticket text DEFAULT NULL::text, p_os_user text DEFAULT NULL::text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET lock_timeout TO '10s'
AS $function$
BEGIN
    RETURN redrive.file_compensation(
        p_action_id, p_target_type, p_target_id, p_version, p_kind, p_amount_minor, p_reason,
        p_ticket, p_os_user,
        jsonb_build_object('target_type', p_target_type, 'kind', p_kind,
                           'amount_minor', p_amount_minor, 'reason', p_reason,
                           'ticket', p_ticket));
END
$function$

;
REVOKE ALL ON FUNCTION redrive.request_compensation(uuid, text, bigint, integer, text, bigint,
                                                    text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.request_compensation(uuid, text, bigint, integer, text, bigint,
                                                       text, text, text) TO redrive_support;

-- ---------------------------------------------------------------------------------------------
-- Bodies that name the renamed columns or write `amount_cents` keys: the same functions with
-- the new names. Audit entries and outbox commands now carry amount_minor only (the reference
-- worker reads amount_minor, and amount_cents from commands written earlier).

CREATE OR REPLACE FUNCTION redrive.file_compensation(p_action_id uuid, p_target_type text, p_target_id bigint, p_version integer, p_kind text, p_amount bigint, p_reason text, p_ticket text, p_os_user text, p_params jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_prev jsonb;
    v_payment text;
    v_locked_payment text;
    v_version integer;
    v_status text;
    v_order text;
    m redrive.reconciliation_mismatch%ROWTYPE;
    v_pay record;
    v_charge record;
    v_charge_ref text;
    v_currency text;
    v_cap bigint;
    v_default bigint;
    v_amount bigint;
    v_open bigint;
    v_total bigint;
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
    IF p_amount IS NULL AND p_target_type = 'dead_letter' THEN
        RAISE EXCEPTION 'an amount (in minor units) is required'
              USING ERRCODE = 'null_value_not_allowed';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'compensate_request', p_os_user,
        jsonb_build_array(jsonb_build_object('id', p_target_id, 'version', p_version)),
        p_params);
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;

    -- The payment first (a target's payment never changes), then the target: every action that
    -- locks both does so in this order.
    IF p_target_type = 'dead_letter' THEN
        SELECT j.entity_id INTO v_payment
          FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
         WHERE dl.id = p_target_id;
    ELSE
        SELECT mm.payment_ref INTO v_payment FROM redrive.reconciliation_mismatch mm
         WHERE mm.id = p_target_id;
    END IF;
    IF v_payment IS NOT NULL THEN
        PERFORM redrive.lock_payment(v_payment);
    END IF;
    IF p_target_type = 'dead_letter' THEN
        SELECT j.entity_id, dl.version, dl.status, j.payload ->> 'order_id'
          INTO v_locked_payment, v_version, v_status, v_order
          FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
         WHERE dl.id = p_target_id FOR UPDATE OF dl;
    ELSE
        SELECT * INTO m FROM redrive.reconciliation_mismatch mm WHERE mm.id = p_target_id
           FOR UPDATE;
        v_locked_payment := m.payment_ref;
        v_version := m.version;
        v_status := m.status;
        v_order := m.order_ref;
    END IF;
    IF v_locked_payment IS DISTINCT FROM v_payment THEN
        RAISE EXCEPTION 'the payment of % % changed while it was being locked', p_target_type,
                        p_target_id
              USING ERRCODE = 'serialization_failure';
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

    -- At most one open compensation per payment (the unique index says so too).
    SELECT c.id INTO v_open FROM redrive.compensation_request c
     WHERE c.payment_ref = v_payment AND c.status IN ('pending_approval', 'approved', 'executing')
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'payment % already has an open compensation (request %)', v_payment,
                        v_open
              USING ERRCODE = 'unique_violation',
                    HINT = 'A payment has at most one open compensation: wait until it is '
                           'decided and carried out, or have it rejected.';
    END IF;
    -- The charge acted on, and what the mismatch itself says is owed.
    v_charge_ref := v_pay.charge_ref;
    v_currency := v_pay.currency;
    IF p_target_type = 'mismatch' THEN
        IF m.kind = 'duplicate_external' THEN
            SELECT * INTO v_charge FROM redrive.payment_charge_list ch
             WHERE ch.payment_ref = v_payment AND ch.charge_ref = m.external_charge_ref;
            IF NOT FOUND OR v_charge.is_primary THEN
                RAISE EXCEPTION 'mismatch % names no duplicate charge of payment %',
                                p_target_id, v_payment
                      USING ERRCODE = 'invalid_parameter_value',
                            HINT = 'A double charge is refunded on its second charge; the '
                                   'provider''s ledger does not list one for this payment.';
            END IF;
            v_charge_ref := v_charge.charge_ref;
            v_currency := v_charge.currency;
            v_default := redrive.refundable_minor(v_payment, v_charge_ref);
        ELSIF m.kind = 'amount_mismatch' THEN
            IF m.internal_currency IS DISTINCT FROM m.external_currency
               OR m.internal_amount_minor IS NULL OR m.external_amount_minor IS NULL THEN
                RAISE EXCEPTION 'mismatch % does not hold both amounts in one currency',
                                p_target_id
                      USING ERRCODE = 'invalid_parameter_value';
            END IF;
            v_default := m.external_amount_minor - m.internal_amount_minor;
            IF v_default <= 0 THEN
                RAISE EXCEPTION 'the provider charged % less than our ledger for %: there is '
                                'nothing to refund', -v_default, v_payment
                      USING ERRCODE = 'check_violation',
                            HINT = 'Resolve the mismatch instead.';
            END IF;
            v_charge_ref := coalesce(m.external_charge_ref, v_pay.charge_ref);
            v_currency := m.external_currency;
        ELSE
            RAISE EXCEPTION 'a compensation is requested from a duplicate_external or an '
                            'amount_mismatch mismatch, not from a % one', m.kind
                  USING ERRCODE = 'invalid_parameter_value',
                        HINT = 'Request it from the dead letter, or resolve the mismatch.';
        END IF;
    END IF;
    PERFORM redrive.require_currency(v_currency);

    v_cap := least(redrive.refundable_minor(v_payment, NULL),
                   redrive.refundable_minor(v_payment, v_charge_ref));
    v_amount := coalesce(p_amount, least(v_default, v_cap));
    IF v_amount IS NULL OR v_amount <= 0 OR v_amount > v_cap THEN
        RAISE EXCEPTION 'amount % exceeds what can be refunded for % (% minor units of %)',
                        v_amount, v_payment, greatest(v_cap, 0), v_currency
              USING ERRCODE = 'check_violation';
    END IF;
    IF v_amount > v_default THEN
        RAISE EXCEPTION 'amount % exceeds what mismatch % owes (% minor units of %)',
                        v_amount, p_target_id, v_default, v_currency
              USING ERRCODE = 'check_violation',
                    HINT = 'A compensation from a mismatch refunds the duplicate charge or the '
                           'difference, never more.';
    END IF;
    -- Four eyes per payment: what its compensations add up to with this one.
    v_total := redrive.compensated_minor(v_payment) + v_amount;
    v_threshold := redrive.approval_threshold_minor(v_currency);
    v_needs_approval := v_total >= v_threshold;
    INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,
                                              amount_minor, currency, status, requires_approval,
                                              requested_by, reason, ticket, action_id, charge_ref)
    VALUES (p_target_type, p_target_id, p_kind, v_payment, v_amount, v_currency,
            CASE WHEN v_needs_approval THEN 'pending_approval' ELSE 'approved' END,
            v_needs_approval, session_user, p_reason, p_ticket, p_action_id, v_charge_ref)
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
                jsonb_build_object('compensation_id', v_request, 'charge_ref', v_charge_ref,
                                   'amount_minor', v_amount,
                                   'currency', v_currency, 'kind', p_kind),
                'compensate:' || v_request, p_action_id);
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'compensate_request',
        jsonb_build_array(jsonb_build_object('type', p_target_type, 'id', p_target_id,
                                             'version', p_version, 'result', 'applied'),
                          jsonb_build_object('type', 'compensation', 'id', v_request,
                                             'result', 'applied')),
        p_reason, p_ticket, p_os_user, jsonb_build_object('status', v_status),
        jsonb_build_object('status', 'compensation_pending',
                           'amount_minor', v_amount, 'currency', v_currency, 'kind', p_kind,
                           'requires_approval', v_needs_approval, 'payment_ref', v_payment,
                           'order_ref', v_order, 'charge_ref', v_charge_ref,
                           'mismatch_kind', m.kind, 'payment_total_minor', v_total,
                           'threshold_minor', v_threshold),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0,
                           'compensation_id', v_request, 'requires_approval', v_needs_approval,
                           'amount_minor', v_amount, 'currency', v_currency,
                           'charge_ref', v_charge_ref));
END
$function$

;

CREATE OR REPLACE FUNCTION redrive.decide_compensation(p_action_id uuid, p_request bigint, p_version integer, p_approve boolean, p_reason text, p_os_user text DEFAULT NULL::text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET lock_timeout TO '10s'
AS $function$
DECLARE
    v_prev jsonb;
    v_action text := CASE WHEN p_approve THEN 'compensate_approve' ELSE 'compensate_reject' END;
    c redrive.compensation_request%ROWTYPE;
    v_charge_ref text;
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
    PERFORM redrive.lock_payment(c.payment_ref);
    v_charge_ref := coalesce(c.charge_ref, (SELECT p.charge_ref FROM redrive.payment_list p
                                             WHERE p.payment_ref = c.payment_ref LIMIT 1));
    -- refundable_minor counts this open request; beyond it nothing may be negative.
    IF p_approve AND (redrive.refundable_minor(c.payment_ref, NULL) < 0
                      OR redrive.refundable_minor(c.payment_ref, v_charge_ref) < 0) THEN
        RAISE EXCEPTION 'amount % is no longer refundable for %', c.amount_minor, c.payment_ref
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
        INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key,
                                    action_id)
        VALUES ('compensate', 'compensation', c.id::text,
                jsonb_build_object('compensation_id', c.id, 'charge_ref', v_charge_ref,
                                   'amount_minor', c.amount_minor, 'currency', c.currency,
                                   'kind', c.kind),
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
                           'requested_by', c.requested_by,
                           'amount_minor', c.amount_minor, 'currency', c.currency,
                           'payment_ref', c.payment_ref, 'charge_ref', v_charge_ref));
END
$function$

;

CREATE OR REPLACE FUNCTION redrive.change_setting(p_action_id uuid, p_name text, p_value text, p_reason text, p_os_user text DEFAULT NULL::text)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET lock_timeout TO '10s'
AS $function$
DECLARE
    v_prev jsonb;
    v_before redrive.settings%ROWTYPE;
    v_minor bigint;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_admin']);
    PERFORM redrive.require_reason(p_reason);
    -- compensation_approval_cents is the setting's name before migration 0021; it is the same
    -- setting, and the audit entry names it by its new name.
    IF p_name = 'compensation_approval_cents' THEN
        p_name := 'compensation_approval_minor';
    END IF;
    IF p_name IS DISTINCT FROM 'compensation_approval_minor' THEN
        RAISE EXCEPTION 'unknown setting %', p_name USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Settings: compensation_approval_minor.';
    END IF;
    IF p_value IS NULL OR p_value !~ '^[0-9]{1,15}$' THEN
        RAISE EXCEPTION 'compensation_approval_minor must be a whole number of minor units'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_minor := p_value::bigint;
    v_prev := redrive.begin_action(p_action_id, 'change_setting', p_os_user, NULL,
                                   jsonb_build_object('name', p_name, 'value', p_value,
                                                      'reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT * INTO v_before FROM redrive.settings FOR UPDATE;
    UPDATE redrive.settings SET compensation_approval_minor = v_minor;
    RETURN redrive.finish_action(
        p_action_id, 'change_setting',
        jsonb_build_array(jsonb_build_object('type', 'setting', 'id', p_name,
                                             'result', 'applied')),
        p_reason, NULL, p_os_user,
        jsonb_build_object(p_name, v_before.compensation_approval_minor),
        jsonb_build_object(p_name, v_minor),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0));
END
$function$

;

CREATE OR REPLACE FUNCTION redrive.settings_sync_default_threshold()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM redrive.approval_threshold WHERE currency = 'default';
    ELSE
        INSERT INTO redrive.approval_threshold AS t (currency, threshold_minor)
        VALUES ('default', NEW.compensation_approval_minor)
        ON CONFLICT (currency) DO UPDATE
           SET threshold_minor = EXCLUDED.threshold_minor, changed_at = clock_timestamp(),
               changed_by = session_user
         WHERE t.threshold_minor IS DISTINCT FROM EXCLUDED.threshold_minor;
    END IF;
    RETURN NULL;
END
$function$

;

CREATE OR REPLACE FUNCTION redrive.default_threshold_sync_settings()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.currency = 'default' THEN
            DELETE FROM redrive.settings;
        END IF;
    ELSIF NEW.currency = 'default' THEN
        INSERT INTO redrive.settings AS s (singleton, compensation_approval_minor)
        VALUES (true, NEW.threshold_minor)
        ON CONFLICT (singleton) DO UPDATE
           SET compensation_approval_minor = EXCLUDED.compensation_approval_minor
         WHERE s.compensation_approval_minor IS DISTINCT FROM EXCLUDED.compensation_approval_minor;
    END IF;
    RETURN NULL;
END
$function$

;

CREATE OR REPLACE FUNCTION redrive.refundable_minor(p_payment_ref text, p_charge_ref text DEFAULT NULL::text)
 RETURNS bigint
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    SELECT coalesce((SELECT sum(ch.charged_minor) - sum(ch.refunded_minor)
                       FROM redrive.payment_charge_list ch
                      WHERE ch.payment_ref = p_payment_ref
                        AND (p_charge_ref IS NULL OR ch.charge_ref = p_charge_ref)), 0)
           - coalesce((SELECT sum(c.amount_minor)
                         FROM redrive.compensation_request c
                        WHERE c.payment_ref = p_payment_ref
                          AND (p_charge_ref IS NULL
                               OR coalesce(c.charge_ref,
                                           (SELECT p.charge_ref FROM redrive.payment_list p
                                             WHERE p.payment_ref = p_payment_ref LIMIT 1))
                                  = p_charge_ref)
                          AND (c.status IN ('pending_approval', 'approved', 'executing')
                               OR (c.status = 'done'
                                   AND NOT EXISTS (SELECT 1 FROM redrive.payment_refund_list r
                                                    WHERE r.payment_ref = p_payment_ref
                                                      AND r.refund_ref = c.provider_ref)))), 0)
$function$

;

CREATE OR REPLACE FUNCTION redrive.find_mentions(p_term text, p_limit integer DEFAULT 100)
 RETURNS TABLE(kind text, id bigint, at timestamp with time zone, status text, summary text, payment_ref text, order_ref text, amount_minor bigint, currency text, run_id bigint, kind_total bigint)
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    v_term text := btrim(p_term, E' \t\r\n');
    v_raw text;
    v_json text;
    v_re_raw text;
    v_re_json text;
    v_json_term text;
    v_cap constant integer := 1001;
BEGIN
    IF v_term IS NULL OR pg_catalog.length(v_term) < 3 THEN
        RAISE EXCEPTION 'search for at least three characters'
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'An order number, a payment reference, an e-mail address or a provider charge id.';
    END IF;
    -- A bounded term: the literal regular expression grows with it and matching cost grows
    -- with its square (a 30,000-character term took 22 s).
    IF pg_catalog.length(v_term) > 200 THEN
        RAISE EXCEPTION 'search for at most 200 characters, not %', pg_catalog.length(v_term)
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_term ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'the search term contains a control character'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 THEN
        RAISE EXCEPTION 'rows per kind must be between 1 and 1000, not %', p_limit
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The term as JSON text writes it inside a string (without the quotes around it).
    v_json_term := pg_catalog.substr(pg_catalog.to_jsonb(v_term)::text, 2,
                                     pg_catalog.length(pg_catalog.to_jsonb(v_term)::text) - 2);
    v_raw := redrive.literal_like_pattern(v_term);
    v_json := redrive.literal_like_pattern(v_json_term);
    v_re_raw := redrive.literal_mention_regex(v_term);
    v_re_json := redrive.literal_mention_regex(v_json_term);

    IF pg_catalog.to_regclass('dead_letter_list') IS NOT NULL
       AND pg_catalog.to_regclass('dead_letter_detail') IS NOT NULL
       AND pg_catalog.has_table_privilege('dead_letter_list', 'SELECT')
       AND pg_catalog.has_table_privilege('dead_letter_detail', 'SELECT') THEN
        RETURN QUERY
        WITH hit AS (
            (SELECT l.id FROM dead_letter_list l
              WHERE (l.last_error ILIKE v_raw AND l.last_error ~* v_re_raw)
                 OR (l.idempotency_key ILIKE v_raw AND l.idempotency_key ~* v_re_raw)
              LIMIT v_cap)
            UNION
            (SELECT x.id FROM dead_letter_detail x
             WHERE ((coalesce(x.entity_id, '') || E'\x1f' || coalesce(x.payload_text, ''))
                        ILIKE v_raw
                    AND (coalesce(x.entity_id, '') || E'\x1f' || coalesce(x.payload_text, ''))
                        ~* v_re_raw)
                OR ((coalesce(x.entity_id, '') || E'\x1f' || coalesce(x.payload_text, ''))
                        ILIKE v_json
                    AND (coalesce(x.entity_id, '') || E'\x1f' || coalesce(x.payload_text, ''))
                        ~* v_re_json)
              LIMIT v_cap)
            LIMIT v_cap),
        total AS (SELECT count(*) AS n FROM hit)
        SELECT 'dead_letter'::text, d.id, d.dead_at, d.status,
               d.queue || ' · ' || d.kind || ': ' || split_part(coalesce(d.last_error, ''), E'\n', 1),
               d.entity_id,
               CASE WHEN d.payload_text IS NOT NULL AND d.payload_text LIKE '{%'
                    THEN d.payload_text::jsonb ->> 'order_id' END,
               pay.charged_minor, pay.currency, NULL::bigint, total.n
          FROM hit
          CROSS JOIN LATERAL (SELECT * FROM dead_letter_detail dd WHERE dd.id = hit.id OFFSET 0) d
          CROSS JOIN total
          LEFT JOIN LATERAL (
              SELECT c.charged_minor, c.currency FROM payment_charge_list c
               WHERE pg_catalog.has_table_privilege('payment_charge_list', 'SELECT')
                 AND c.payment_ref = d.entity_id AND c.is_primary
               LIMIT 1) pay ON true
         ORDER BY d.dead_at DESC, d.id DESC
         LIMIT p_limit;
    END IF;

    IF pg_catalog.to_regclass('mismatch_list') IS NOT NULL
       AND pg_catalog.has_table_privilege('mismatch_list', 'SELECT') THEN
        RETURN QUERY
        WITH hit AS (
            SELECT s.id FROM (
                SELECT m.id,
                       coalesce(m.payment_ref, '') || E'\x1f' || coalesce(m.order_ref, '')
                       || E'\x1f' || coalesce(m.internal_charge_ref, '') || E'\x1f'
                       || coalesce(m.external_charge_ref, '') || E'\x1f'
                       || coalesce(m.internal_record, '') || E'\x1f'
                       || coalesce(m.external_record, '') AS doc
                  FROM mismatch_list m) s
             WHERE (s.doc ILIKE v_raw AND s.doc ~* v_re_raw)
                OR (s.doc ILIKE v_json AND s.doc ~* v_re_json)
            LIMIT v_cap),
        total AS (SELECT count(*) AS n FROM hit)
        SELECT 'mismatch'::text, m.id, m.detected_at, m.status,
               m.kind || coalesce(' · ' || m.external_charge_ref, ''),
               m.payment_ref, m.order_ref,
               coalesce(m.internal_amount_minor, m.external_amount_minor),
               coalesce(m.internal_currency, m.external_currency), m.run_id, total.n
          FROM hit
          CROSS JOIN LATERAL (SELECT * FROM mismatch_list mm WHERE mm.id = hit.id OFFSET 0) m
          CROSS JOIN total
         ORDER BY m.detected_at DESC, m.id DESC
         LIMIT p_limit;
    END IF;

    IF pg_catalog.to_regclass('compensation_list') IS NOT NULL
       AND pg_catalog.has_table_privilege('compensation_list', 'SELECT') THEN
        RETURN QUERY
        WITH hit AS (
            SELECT s.id FROM (
                SELECT c.id,
                       coalesce(c.payment_ref, '') || E'\x1f' || coalesce(c.charge_ref, '')
                       || E'\x1f' || coalesce(c.provider_ref, '') || E'\x1f'
                       || coalesce(c.reason, '') || E'\x1f' || coalesce(c.ticket, '') AS doc
                  FROM compensation_list c) s
             WHERE s.doc ILIKE v_raw AND s.doc ~* v_re_raw
            LIMIT v_cap),
        total AS (SELECT count(*) AS n FROM hit)
        SELECT 'compensation'::text, c.id, c.requested_at, c.status,
               c.kind || ' from ' || replace(c.target_type, '_', ' ') || ' ' || c.target_id
                   || ' · ' || c.requested_by,
               c.payment_ref, NULL::text, c.amount_minor, c.currency, NULL::bigint, total.n
          FROM hit
          CROSS JOIN LATERAL (SELECT * FROM compensation_list cc WHERE cc.id = hit.id OFFSET 0) c
          CROSS JOIN total
         ORDER BY c.requested_at DESC, c.id DESC
         LIMIT p_limit;
    END IF;

    -- Audit entries only to a role that may also read the compensations: their before/after
    -- carries each compensation's payment, amount, requester and reason, which the worker role
    -- may not read in compensation_list.
    IF pg_catalog.to_regclass('audit_entry_list') IS NOT NULL
       AND pg_catalog.has_table_privilege('audit_entry_list', 'SELECT')
       AND pg_catalog.to_regclass('compensation_list') IS NOT NULL
       AND pg_catalog.has_table_privilege('compensation_list', 'SELECT') THEN
        RETURN QUERY
        WITH hit AS (
            SELECT s.id FROM (
                SELECT e.id,
                       coalesce(e.targets_text, '') || E'\x1f' || coalesce(e.before_text, '')
                       || E'\x1f' || coalesce(e.after_text, '') || E'\x1f'
                       || coalesce(e.outcome_text, '') || E'\x1f' || coalesce(e.reason, '')
                       || E'\x1f' || coalesce(e.ticket, '') AS doc
                  FROM audit_entry_list e) s
             WHERE (s.doc ILIKE v_raw AND s.doc ~* v_re_raw)
                OR (s.doc ILIKE v_json AND s.doc ~* v_re_json)
            LIMIT v_cap),
        total AS (SELECT count(*) AS n FROM hit)
        SELECT 'audit_entry'::text, e.id, e.at, NULL::text,
               e.action || ' by ' || e.db_user || coalesce(': ' || e.reason, ''),
               NULL::text, NULL::text, NULL::bigint, NULL::text, NULL::bigint, total.n
          FROM hit
          CROSS JOIN LATERAL (SELECT * FROM audit_entry_list ee WHERE ee.id = hit.id OFFSET 0) e
          CROSS JOIN total
         ORDER BY e.at DESC, e.id DESC
         LIMIT p_limit;
    END IF;
END
$function$

;
