-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 8: the money rules (docs/domain.md "Money"). What changes:
--   * four eyes per payment, not per request: the payment's open and executed compensations plus
--     the new one decide whether a second person is needed, and a payment has at most one open
--     compensation (a unique index);
--   * requests on one payment serialize on a row of redrive.payment_lock (never an advisory
--     lock, which any login could squat), whichever target they come from;
--   * approval thresholds per ISO 4217 currency (redrive.approval_threshold, with a default
--     row that is the old single threshold), changed through an audited function;
--   * known currencies with their exponents (redrive.currency): a request in any other is
--     refused;
--   * what is refundable is defined once, in redrive.refundable_minor;
--   * a compensation can be requested from a reconciliation mismatch itself: the duplicate
--     charge of a double charge, the difference of an amount mismatch, never the full charge.

-- ---------------------------------------------------------------------------------------------
-- Currencies: ISO 4217 code and exponent (the number of digits after the decimal point of the
-- major unit). Amounts are always integer minor units; the exponent only says how to show them.
CREATE TABLE redrive.currency (
    code     text     PRIMARY KEY CHECK (code ~ '^[A-Z]{3}$'),
    exponent smallint NOT NULL CHECK (exponent BETWEEN 0 AND 4),
    name     text     NOT NULL
);
COMMENT ON TABLE redrive.currency IS
    'ISO 4217 currencies Redrive accepts, with their exponent; a compensation in a currency not listed is refused';
INSERT INTO redrive.currency (code, exponent, name) VALUES
    ('BIF', 0, 'Burundian franc'), ('CLP', 0, 'Chilean peso'), ('DJF', 0, 'Djiboutian franc'),
    ('GNF', 0, 'Guinean franc'), ('ISK', 0, 'Icelandic króna'), ('JPY', 0, 'Japanese yen'),
    ('KMF', 0, 'Comorian franc'), ('KRW', 0, 'South Korean won'), ('PYG', 0, 'Paraguayan guaraní'),
    ('RWF', 0, 'Rwandan franc'), ('UGX', 0, 'Ugandan shilling'), ('VND', 0, 'Vietnamese đồng'),
    ('VUV', 0, 'Vanuatu vatu'), ('XAF', 0, 'Central African CFA franc'),
    ('XOF', 0, 'West African CFA franc'), ('XPF', 0, 'CFP franc'),
    ('AED', 2, 'UAE dirham'), ('AUD', 2, 'Australian dollar'), ('BRL', 2, 'Brazilian real'),
    ('CAD', 2, 'Canadian dollar'), ('CHF', 2, 'Swiss franc'), ('CNY', 2, 'Renminbi'),
    ('CZK', 2, 'Czech koruna'), ('DKK', 2, 'Danish krone'), ('EUR', 2, 'Euro'),
    ('GBP', 2, 'Pound sterling'), ('HKD', 2, 'Hong Kong dollar'), ('HUF', 2, 'Hungarian forint'),
    ('ILS', 2, 'Israeli new shekel'), ('INR', 2, 'Indian rupee'), ('MXN', 2, 'Mexican peso'),
    ('NOK', 2, 'Norwegian krone'), ('NZD', 2, 'New Zealand dollar'), ('PLN', 2, 'Polish złoty'),
    ('RON', 2, 'Romanian leu'), ('SAR', 2, 'Saudi riyal'), ('SEK', 2, 'Swedish krona'),
    ('SGD', 2, 'Singapore dollar'), ('THB', 2, 'Thai baht'), ('TRY', 2, 'Turkish lira'),
    ('USD', 2, 'US dollar'), ('ZAR', 2, 'South African rand'),
    ('BHD', 3, 'Bahraini dinar'), ('IQD', 3, 'Iraqi dinar'), ('JOD', 3, 'Jordanian dinar'),
    ('KWD', 3, 'Kuwaiti dinar'), ('LYD', 3, 'Libyan dinar'), ('OMR', 3, 'Omani rial'),
    ('TND', 3, 'Tunisian dinar');

-- The exponent of a known currency; raises for any other (never a guess).
CREATE FUNCTION redrive.require_currency(p_code text) RETURNS smallint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_exponent smallint;
BEGIN
    SELECT exponent INTO v_exponent FROM redrive.currency WHERE code = p_code;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'unknown currency %: not in redrive.currency', coalesce(p_code, '(none)')
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'Redrive does not guess how many minor units a currency has; the '
                           'schema owner adds it to redrive.currency with its ISO 4217 exponent.';
    END IF;
    RETURN v_exponent;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Approval thresholds per currency, in integer minor units of that currency. The row 'default'
-- applies to every currency without a row of its own; it is the single threshold of earlier
-- versions (redrive.settings.compensation_approval_cents), and the two are kept equal.
CREATE TABLE redrive.approval_threshold (
    currency        text        PRIMARY KEY CHECK (currency = 'default' OR currency ~ '^[A-Z]{3}$'),
    threshold_minor bigint      NOT NULL CHECK (threshold_minor >= 0),
    known_currency  text        GENERATED ALWAYS AS (nullif(currency, 'default')) STORED
                                REFERENCES redrive.currency (code),
    changed_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    changed_by      text        NOT NULL DEFAULT session_user
);
COMMENT ON TABLE redrive.approval_threshold IS
    'A payment whose open and executed compensations with the new one reach its currency''s threshold (minor units) waits for a second person; row ''default'' for currencies not listed. Changed through redrive.change_approval_threshold';
INSERT INTO redrive.approval_threshold (currency, threshold_minor)
SELECT 'default', s.compensation_approval_cents FROM redrive.settings s;

-- The threshold for p_currency: its own row, else the default row, else 0 (with both missing,
-- every compensation waits for a second person).
CREATE FUNCTION redrive.approval_threshold_minor(p_currency text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT t.threshold_minor FROM redrive.approval_threshold t
                  WHERE t.currency = p_currency AND p_currency <> 'default'),
                (SELECT t.threshold_minor FROM redrive.approval_threshold t
                  WHERE t.currency = 'default'),
                0);

-- Every known currency with the threshold that applies to it, for the request and approval
-- dialogs; from_default says whether it comes from the default row.
CREATE VIEW redrive.approval_threshold_list AS
SELECT c.code AS currency, c.exponent, c.name,
       coalesce(t.threshold_minor, d.threshold_minor, 0) AS threshold_minor,
       t.currency IS NULL AS from_default, coalesce(t.changed_at, d.changed_at) AS changed_at,
       coalesce(t.changed_by, d.changed_by) AS changed_by
  FROM redrive.currency c
  LEFT JOIN redrive.approval_threshold t ON t.currency = c.code
  LEFT JOIN redrive.approval_threshold d ON d.currency = 'default';

-- Whether this transaction is inside an audited change of the money settings: it claimed an
-- unfinished change_setting or change_approval_threshold action (a session setting could be set
-- by anyone, so it is not what decides).
CREATE FUNCTION redrive.in_audited_money_change() RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (SELECT 1 FROM redrive.operator_action o
                WHERE o.action IN ('change_setting', 'change_approval_threshold')
                  AND o.outcome IS NULL AND o.xmin = xid(pg_current_xact_id()));

CREATE OR REPLACE FUNCTION redrive.settings_audit_direct_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT redrive.in_audited_money_change() THEN
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

-- A change to redrive.currency or redrive.approval_threshold made outside
-- redrive.change_approval_threshold (the owner with psql, or a change of redrive.settings that
-- moved the default row) is audited as <table>_changed_directly.
CREATE FUNCTION redrive.money_table_audit_direct_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_row jsonb := CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END;
BEGIN
    IF NOT redrive.in_audited_money_change() THEN
        INSERT INTO redrive.audit_log (action, targets, reason, before, after, action_id,
                                       outcome)
        VALUES (TG_TABLE_NAME || '_changed_directly',
                jsonb_build_array(jsonb_build_object(
                    'type', TG_TABLE_NAME,
                    'id', coalesce(v_row ->> 'currency', v_row ->> 'code'),
                    'result', 'applied')),
                format('%s outside redrive.change_approval_threshold', lower(TG_OP)),
                CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,
                CASE WHEN TG_OP IN ('UPDATE', 'INSERT') THEN to_jsonb(NEW) END,
                gen_random_uuid(), '{"confirmed": 1, "applied": 1}');
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION redrive.money_table_refuse_truncate() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'redrive.% is never truncated', TG_TABLE_NAME
          USING ERRCODE = 'insufficient_privilege',
                HINT = 'Change thresholds with redrive.change_approval_threshold.';
END
$$;

-- The old single threshold and the default row stay one value: a change to either moves the
-- other (each write only when the value differs, so the pair settles after one round).
CREATE FUNCTION redrive.settings_sync_default_threshold() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM redrive.approval_threshold WHERE currency = 'default';
    ELSE
        INSERT INTO redrive.approval_threshold AS t (currency, threshold_minor)
        VALUES ('default', NEW.compensation_approval_cents)
        ON CONFLICT (currency) DO UPDATE
           SET threshold_minor = EXCLUDED.threshold_minor, changed_at = clock_timestamp(),
               changed_by = session_user
         WHERE t.threshold_minor IS DISTINCT FROM EXCLUDED.threshold_minor;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION redrive.default_threshold_sync_settings() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.currency = 'default' THEN
            DELETE FROM redrive.settings;
        END IF;
    ELSIF NEW.currency = 'default' THEN
        INSERT INTO redrive.settings AS s (singleton, compensation_approval_cents)
        VALUES (true, NEW.threshold_minor)
        ON CONFLICT (singleton) DO UPDATE
           SET compensation_approval_cents = EXCLUDED.compensation_approval_cents
         WHERE s.compensation_approval_cents IS DISTINCT FROM EXCLUDED.compensation_approval_cents;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER settings_sync_default_threshold
    AFTER INSERT OR UPDATE OR DELETE ON redrive.settings
    FOR EACH ROW EXECUTE FUNCTION redrive.settings_sync_default_threshold();
CREATE TRIGGER approval_threshold_sync_settings
    AFTER INSERT OR UPDATE OR DELETE ON redrive.approval_threshold
    FOR EACH ROW EXECUTE FUNCTION redrive.default_threshold_sync_settings();
CREATE TRIGGER approval_threshold_audit_direct_change
    AFTER INSERT OR UPDATE OR DELETE ON redrive.approval_threshold
    FOR EACH ROW EXECUTE FUNCTION redrive.money_table_audit_direct_change();
CREATE TRIGGER approval_threshold_no_truncate
    BEFORE TRUNCATE ON redrive.approval_threshold
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.money_table_refuse_truncate();
CREATE TRIGGER currency_audit_direct_change
    AFTER INSERT OR UPDATE OR DELETE ON redrive.currency
    FOR EACH ROW EXECUTE FUNCTION redrive.money_table_audit_direct_change();
CREATE TRIGGER currency_no_truncate
    BEFORE TRUNCATE ON redrive.currency
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.money_table_refuse_truncate();

-- Set (or, with p_threshold_minor NULL, remove) the approval threshold of one currency, or of
-- 'default' (which cannot be removed this way) (role: redrive_admin). Audited with before and
-- after; the currency must be known.
CREATE FUNCTION redrive.change_approval_threshold(p_action_id uuid, p_currency text,
                                                  p_threshold_minor bigint, p_reason text,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_prev jsonb;
    v_before bigint;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_admin']);
    PERFORM redrive.require_reason(p_reason);
    IF p_currency IS DISTINCT FROM 'default' THEN
        PERFORM redrive.require_currency(p_currency);
    ELSIF p_threshold_minor IS NULL THEN
        RAISE EXCEPTION 'the default threshold cannot be removed, only changed'
              USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF p_threshold_minor < 0 THEN
        RAISE EXCEPTION 'a threshold is a whole, non-negative number of minor units'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.begin_action(p_action_id, 'change_approval_threshold', p_os_user, NULL,
                                   jsonb_build_object('currency', p_currency,
                                                      'threshold_minor', p_threshold_minor,
                                                      'reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    SELECT threshold_minor INTO v_before FROM redrive.approval_threshold
     WHERE currency = p_currency FOR UPDATE;
    IF p_threshold_minor IS NULL THEN
        DELETE FROM redrive.approval_threshold WHERE currency = p_currency;
    ELSE
        INSERT INTO redrive.approval_threshold AS t (currency, threshold_minor)
        VALUES (p_currency, p_threshold_minor)
        ON CONFLICT (currency) DO UPDATE
           SET threshold_minor = EXCLUDED.threshold_minor, changed_at = clock_timestamp(),
               changed_by = session_user;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'change_approval_threshold',
        jsonb_build_array(jsonb_build_object('type', 'approval_threshold', 'id', p_currency,
                                             'result', 'applied')),
        p_reason, NULL, p_os_user,
        jsonb_build_object('currency', p_currency, 'threshold_minor', v_before),
        jsonb_build_object('currency', p_currency, 'threshold_minor', p_threshold_minor,
                           'effective_threshold_minor',
                           redrive.approval_threshold_minor(p_currency)),
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0));
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Serializing on a payment. One row per payment that ever had a compensation request; an action
-- locks it FOR UPDATE before it reads what is refundable, so two requests on one payment (from a
-- dead letter and from a mismatch, say) take turns. Only the owner's functions can lock it:
-- row locks need UPDATE privilege, which no login has (an advisory lock could be squatted).
CREATE TABLE redrive.payment_lock (
    payment_ref     text        PRIMARY KEY,
    first_locked_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
COMMENT ON TABLE redrive.payment_lock IS
    'One row per payment; compensation actions lock it FOR UPDATE so requests on one payment take turns (docs/domain.md)';

CREATE FUNCTION redrive.lock_payment(p_payment_ref text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO redrive.payment_lock (payment_ref) VALUES (p_payment_ref)
    ON CONFLICT (payment_ref) DO NOTHING;
    -- A statement of its own: after a wait it locks the row the other session committed.
    PERFORM 1 FROM redrive.payment_lock WHERE payment_ref = p_payment_ref FOR UPDATE;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The payments contract, beyond redrive.payment_list (one row per payment, its charge):
--   payment_charge_list: every provider charge of a payment (a double charge shows twice), with
--     what the provider refunded of it; is_primary marks the charge payment_list names;
--   payment_refund_list: the refunds in the provider's ledger, by refund id.
-- A deployment that only defines payment_list gets one charge per payment and an empty refund
-- list: an executed compensation then keeps counting against what is refundable even after its
-- refund shows in refunded_cents (counted twice: too little refundable, never too much). Point
-- payment_refund_list at the provider's ledger to count it exactly once.
CREATE VIEW redrive.payment_charge_list AS
SELECT p.payment_ref, p.charge_ref, p.charged_cents AS charged_minor,
       p.refunded_cents AS refunded_minor, p.currency, NULL::timestamptz AS charged_at,
       true AS is_primary
  FROM redrive.payment_list p;

CREATE VIEW redrive.payment_refund_list AS
SELECT NULL::text AS payment_ref, NULL::text AS charge_ref, NULL::text AS refund_ref,
       NULL::bigint AS amount_minor, NULL::timestamptz AS refunded_at
 WHERE false;

-- The provider charge a compensation acts on (NULL before version 8: the payment's charge in
-- payment_list).
ALTER TABLE redrive.compensation_request ADD COLUMN charge_ref text;
COMMENT ON COLUMN redrive.compensation_request.charge_ref IS
    'The provider charge this compensation refunds (a duplicate charge for a double charge); NULL: the payment''s charge';

-- The provider charges a mismatch is about: ours (the one our ledger recorded) and theirs (the
-- provider's record; for duplicate_external, the second charge).
ALTER TABLE redrive.reconciliation_mismatch ADD COLUMN internal_charge_ref text,
                                            ADD COLUMN external_charge_ref text;
UPDATE redrive.reconciliation_mismatch
   SET internal_charge_ref = internal_record ->> 'provider_charge_id',
       external_charge_ref = external_record ->> 'id'
 WHERE internal_record ? 'provider_charge_id' OR external_record ? 'id';

-- ---------------------------------------------------------------------------------------------
-- What can still be refunded, defined once (docs/domain.md "Refundable"), in minor units: for
-- the payment (p_charge_ref NULL) or for one of its provider charges,
--     charged, minus what the provider's ledger shows refunded,
--     minus compensations open (pending approval, approved, executing),
--     minus compensations done whose refund is not in the provider's ledger yet
--       (payment_refund_list); once it is there, it counts through "refunded" only.
-- A request without a charge_ref acts on the payment's charge in payment_list.
CREATE FUNCTION redrive.refundable_minor(p_payment_ref text, p_charge_ref text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((SELECT sum(ch.charged_minor) - sum(ch.refunded_minor)
                       FROM redrive.payment_charge_list ch
                      WHERE ch.payment_ref = p_payment_ref
                        AND (p_charge_ref IS NULL OR ch.charge_ref = p_charge_ref)), 0)
           - coalesce((SELECT sum(c.amount_cents)
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
$$;

-- The name of earlier versions, kept for the console's readers: the same function.
CREATE OR REPLACE FUNCTION redrive.refundable_cents(p_payment_ref text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN redrive.refundable_minor(p_payment_ref, NULL);

-- What a payment's compensations add up to for four eyes: open and executed (done) ones, in
-- minor units. Rejected and failed ones refunded nothing.
CREATE FUNCTION redrive.compensated_minor(p_payment_ref text) RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN coalesce((SELECT sum(c.amount_cents) FROM redrive.compensation_request c
                  WHERE c.payment_ref = p_payment_ref
                    AND c.status IN ('pending_approval', 'approved', 'executing', 'done')), 0);

-- ---------------------------------------------------------------------------------------------
-- At most one open compensation per payment: a constraint, whatever function writes.
DO $check$
DECLARE
    v_payments text;
BEGIN
    SELECT string_agg(payment_ref, ', ' ORDER BY payment_ref) INTO v_payments
      FROM (SELECT payment_ref FROM redrive.compensation_request
             WHERE status IN ('pending_approval', 'approved', 'executing')
             GROUP BY payment_ref HAVING count(*) > 1) x;
    IF v_payments IS NOT NULL THEN
        RAISE EXCEPTION 'payments with more than one open compensation: %', v_payments
              USING ERRCODE = 'unique_violation',
                    HINT = 'Approve, reject or let the worker finish all but one of each, then '
                           'run the migration again.';
    END IF;
END
$check$;
CREATE UNIQUE INDEX compensation_request_one_open_per_payment_idx
    ON redrive.compensation_request (payment_ref)
    WHERE status IN ('pending_approval', 'approved', 'executing');

-- ---------------------------------------------------------------------------------------------
-- Filing a compensation request, for both entry points below. p_amount NULL (mismatch targets
-- only) takes the mismatch's own amount: the duplicate charge of a duplicate_external (what is
-- still refundable of it), the difference of an amount_mismatch. Any amount is capped by
-- redrive.refundable_minor for the payment and for the charge it acts on.
CREATE FUNCTION redrive.file_compensation(p_action_id uuid, p_target_type text,
                                          p_target_id bigint, p_version integer, p_kind text,
                                          p_amount bigint, p_reason text, p_ticket text,
                                          p_os_user text, p_params jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
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
               OR m.internal_amount_cents IS NULL OR m.external_amount_cents IS NULL THEN
                RAISE EXCEPTION 'mismatch % does not hold both amounts in one currency',
                                p_target_id
                      USING ERRCODE = 'invalid_parameter_value';
            END IF;
            v_default := m.external_amount_cents - m.internal_amount_cents;
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
                                              amount_cents, currency, status, requires_approval,
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
                                   'amount_minor', v_amount, 'amount_cents', v_amount,
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
        jsonb_build_object('status', 'compensation_pending', 'amount_cents', v_amount,
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
$$;

-- Request a compensation for a dead letter or a mismatch (roles: support); p_amount_cents in
-- minor units of the payment's currency (the name is that of earlier versions). NULL takes a
-- mismatch's own amount (see redrive.file_compensation).
CREATE OR REPLACE FUNCTION redrive.request_compensation(p_action_id uuid, p_target_type text,
                                                        p_target_id bigint, p_version integer,
                                                        p_kind text, p_amount_cents bigint,
                                                        p_reason text,
                                                        p_ticket text DEFAULT NULL,
                                                        p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
BEGIN
    RETURN redrive.file_compensation(
        p_action_id, p_target_type, p_target_id, p_version, p_kind, p_amount_cents, p_reason,
        p_ticket, p_os_user,
        jsonb_build_object('target_type', p_target_type, 'kind', p_kind,
                           'amount_cents', p_amount_cents, 'reason', p_reason,
                           'ticket', p_ticket));
END
$$;

-- Request a refund from a reconciliation mismatch (roles: support): for a duplicate_external,
-- of the duplicate charge (its amount by default); for an amount_mismatch, of the difference
-- (by default, and never more). p_amount_minor in minor units of the charge's currency.
CREATE FUNCTION redrive.request_mismatch_compensation(p_action_id uuid, p_mismatch bigint,
                                                      p_version integer, p_amount_minor bigint,
                                                      p_reason text, p_ticket text DEFAULT NULL,
                                                      p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
BEGIN
    RETURN redrive.file_compensation(
        p_action_id, 'mismatch', p_mismatch, p_version, 'refund', p_amount_minor, p_reason,
        p_ticket, p_os_user,
        jsonb_build_object('target_type', 'mismatch', 'kind', 'refund',
                           'amount_minor', p_amount_minor, 'reason', p_reason,
                           'ticket', p_ticket));
END
$$;

-- Approve or reject a compensation request (roles: approver), as in version 7, except that it
-- locks the payment (after the request, before the target) and re-checks the amount against
-- redrive.refundable_minor for the payment and for the charge the request acts on.
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
        INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key,
                                    action_id)
        VALUES ('compensate', 'compensation', c.id::text,
                jsonb_build_object('compensation_id', c.id, 'charge_ref', v_charge_ref,
                                   'amount_minor', c.amount_cents,
                                   'amount_cents', c.amount_cents, 'currency', c.currency,
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
                           'requested_by', c.requested_by, 'amount_cents', c.amount_cents,
                           'amount_minor', c.amount_cents, 'currency', c.currency,
                           'payment_ref', c.payment_ref, 'charge_ref', v_charge_ref));
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Read contract additions (columns appended, so existing readers keep their positions).
CREATE OR REPLACE VIEW redrive.compensation_list AS
SELECT c.id, c.target_type, c.target_id, c.kind, c.payment_ref, c.amount_cents, c.currency,
       c.status, c.requires_approval, c.requested_by, c.requested_at, c.reason, c.ticket,
       c.version, c.completed_at, c.provider_ref, c.error_message, a.decided_by, a.decision,
       a.decided_at, a.reason AS decision_reason, c.charge_ref
  FROM redrive.compensation_request c
  LEFT JOIN redrive.compensation_approval a ON a.request_id = c.id;

CREATE OR REPLACE VIEW redrive.mismatch_list AS
SELECT m.id, m.run_id, m.kind, m.payment_ref, m.order_ref, m.internal_amount_cents,
       m.external_amount_cents, m.internal_currency, m.external_currency, m.internal_status,
       m.external_status, m.internal_record::text AS internal_record,
       m.external_record::text AS external_record, m.status, m.detected_at, m.version,
       m.resolution, m.resolved_by, m.resolved_at, m.internal_charge_ref, m.external_charge_ref
  FROM redrive.reconciliation_mismatch m;

-- A mismatch's two provider charges side by side: the one our ledger recorded (original) and
-- the one the mismatch is about (for duplicate_external, the second charge), with what a
-- compensation from the mismatch would refund by default (suggested_minor; NULL when none).
CREATE VIEW redrive.mismatch_charge_list AS
SELECT m.id AS mismatch_id, m.kind, m.status, m.payment_ref, m.order_ref,
       o.charge_ref AS original_charge_ref, o.charged_minor AS original_charged_minor,
       o.refunded_minor AS original_refunded_minor, o.currency AS original_currency,
       o.charged_at AS original_charged_at,
       d.charge_ref AS other_charge_ref, d.charged_minor AS other_charged_minor,
       d.refunded_minor AS other_refunded_minor, d.currency AS other_currency,
       d.charged_at AS other_charged_at,
       CASE WHEN m.kind = 'duplicate_external' AND d.charge_ref IS NOT NULL
                 AND NOT d.is_primary
            THEN greatest(redrive.refundable_minor(m.payment_ref, d.charge_ref), 0)
            WHEN m.kind = 'amount_mismatch'
                 AND m.internal_currency IS NOT DISTINCT FROM m.external_currency
                 AND m.external_amount_cents > m.internal_amount_cents
            THEN m.external_amount_cents - m.internal_amount_cents END AS suggested_minor
  FROM redrive.reconciliation_mismatch m
  LEFT JOIN redrive.payment_charge_list o ON o.payment_ref = m.payment_ref AND o.is_primary
  LEFT JOIN redrive.payment_charge_list d ON d.payment_ref = m.payment_ref
                                          AND d.charge_ref = m.external_charge_ref;

-- ---------------------------------------------------------------------------------------------
-- Grants.
REVOKE ALL ON redrive.currency, redrive.approval_threshold, redrive.payment_lock,
              redrive.approval_threshold_list, redrive.payment_charge_list,
              redrive.payment_refund_list, redrive.mismatch_charge_list
    FROM PUBLIC;
GRANT SELECT ON redrive.currency, redrive.approval_threshold, redrive.approval_threshold_list,
                redrive.payment_charge_list, redrive.payment_refund_list,
                redrive.mismatch_charge_list, redrive.payment_lock
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
GRANT SELECT ON redrive.currency, redrive.approval_threshold, redrive.approval_threshold_list
    TO redrive_admin;
GRANT SELECT ON redrive.payment_charge_list, redrive.payment_refund_list, redrive.currency
    TO redrive_worker;
REVOKE ALL ON FUNCTION redrive.require_currency(text),
                       redrive.approval_threshold_minor(text),
                       redrive.in_audited_money_change(),
                       redrive.money_table_audit_direct_change(),
                       redrive.money_table_refuse_truncate(),
                       redrive.settings_sync_default_threshold(),
                       redrive.default_threshold_sync_settings(),
                       redrive.change_approval_threshold(uuid, text, bigint, text, text),
                       redrive.lock_payment(text),
                       redrive.refundable_minor(text, text),
                       redrive.compensated_minor(text),
                       redrive.file_compensation(uuid, text, bigint, integer, text, bigint, text,
                                                 text, text, jsonb),
                       redrive.request_mismatch_compensation(uuid, bigint, integer, bigint, text,
                                                             text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.approval_threshold_minor(text),
                          redrive.refundable_minor(text, text),
                          redrive.compensated_minor(text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_admin;
GRANT EXECUTE ON FUNCTION redrive.change_approval_threshold(uuid, text, bigint, text, text)
    TO redrive_admin;
GRANT EXECUTE ON FUNCTION redrive.request_mismatch_compensation(uuid, bigint, integer, bigint,
                                                                text, text, text)
    TO redrive_support;
ALTER FUNCTION redrive.decide_compensation(uuid, bigint, integer, boolean, text, text)
    SET lock_timeout = '10s';
