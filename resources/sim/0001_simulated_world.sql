-- The reference worker's simulated outside world (issue 3), in its own schema `sim`, apart from
-- Redrive's: a payment provider with charges and refunds that honours its own idempotency keys
-- (or, when told not to, shows what duplicates look like), a mail sender that is not idempotent
-- and counts every send, and our ledger of orders and payments. Applied by
-- `redrive-worker setup`; the schema and sim.schema_version exist already.

CREATE TABLE sim.settings (
    singleton             boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    provider_honours_keys boolean NOT NULL DEFAULT true
);
INSERT INTO sim.settings DEFAULT VALUES;

-- Our side ---------------------------------------------------------------------------------------
CREATE TABLE sim.ledger_order (
    id           text        PRIMARY KEY,
    customer     text        NOT NULL,
    email        text        NOT NULL,
    amount_cents bigint      NOT NULL CHECK (amount_cents > 0),
    currency     text        NOT NULL,
    created_at   timestamptz NOT NULL
);

CREATE TABLE sim.ledger_payment (
    id                 text        PRIMARY KEY,
    order_id           text        NOT NULL REFERENCES sim.ledger_order (id),
    amount_cents       bigint      NOT NULL CHECK (amount_cents > 0),
    currency           text        NOT NULL,
    status             text        NOT NULL DEFAULT 'pending'
                       CHECK (status IN ('pending', 'processing', 'succeeded', 'failed',
                                         'refunded', 'partially_refunded')),
    idempotency_key    text        NOT NULL UNIQUE,
    provider_charge_id text,
    refunded_cents     bigint      NOT NULL DEFAULT 0,
    -- Ordering (DESIGN §3 rule 9): the newest provider event applied to this payment.
    last_event_seq     bigint      NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX ledger_payment_charge_idx ON sim.ledger_payment (provider_charge_id);

-- Items of ledger sync batches that were applied (each in its own transaction).
CREATE TABLE sim.ledger_sync_item (
    batch_id   text        NOT NULL,
    item_no    integer     NOT NULL,
    payment_id text        NOT NULL,
    applied_at timestamptz NOT NULL,
    PRIMARY KEY (batch_id, item_no)
);

-- Every webhook event we processed, applied or skipped as stale (ordering, DESIGN §3 rule 9).
-- No unique constraint on purpose: a duplicate effect would show here as a second row.
CREATE TABLE sim.webhook_effect (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id   text        NOT NULL,
    payment_id text        NOT NULL,
    type       text        NOT NULL,
    seq        bigint      NOT NULL,
    applied    boolean     NOT NULL,
    at         timestamptz NOT NULL
);
CREATE INDEX webhook_effect_event_idx ON sim.webhook_effect (event_id);

-- Their side -------------------------------------------------------------------------------------
CREATE TABLE sim.provider_charge (
    id              text        PRIMARY KEY,
    idempotency_key text        NOT NULL,
    payment_ref     text        NOT NULL,
    amount_cents    bigint      NOT NULL,
    currency        text        NOT NULL,
    status          text        NOT NULL DEFAULT 'succeeded'
                    CHECK (status IN ('succeeded', 'failed', 'refunded', 'partially_refunded')),
    refunded_cents  bigint      NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL
);
CREATE INDEX provider_charge_key_idx ON sim.provider_charge (idempotency_key);
CREATE INDEX provider_charge_payment_idx ON sim.provider_charge (payment_ref);

CREATE TABLE sim.provider_refund (
    id              text        PRIMARY KEY,
    idempotency_key text        NOT NULL,
    charge_id       text        NOT NULL REFERENCES sim.provider_charge (id),
    amount_cents    bigint      NOT NULL CHECK (amount_cents > 0),
    created_at      timestamptz NOT NULL
);
CREATE INDEX provider_refund_key_idx ON sim.provider_refund (idempotency_key);

CREATE TABLE sim.mail_send (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    to_address  text        NOT NULL,
    template    text        NOT NULL,
    payment_ref text,
    sent_at     timestamptz NOT NULL
);
CREATE INDEX mail_send_payment_idx ON sim.mail_send (payment_ref);

-- The provider's API --------------------------------------------------------------------------
-- Charge: with keys honoured, a repeat of a key returns the first charge (replayed = true);
-- without, every call charges again.
CREATE FUNCTION sim.provider_charge(p_key text, p_payment_ref text, p_amount_cents bigint,
                                    p_currency text, p_now timestamptz,
                                    OUT charge_id text, OUT replayed boolean)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Serialize calls for one key, as a provider's own key store would.
    PERFORM pg_advisory_xact_lock(hashtextextended('sim.charge:' || p_key, 0));
    IF (SELECT provider_honours_keys FROM sim.settings) THEN
        SELECT id INTO charge_id FROM sim.provider_charge
         WHERE idempotency_key = p_key ORDER BY created_at, id LIMIT 1;
        IF FOUND THEN
            replayed := true;
            RETURN;
        END IF;
    END IF;
    -- Ids follow from the key and how often it was charged, so a seeded demo is reproducible.
    charge_id := 'ch_' || substr(md5(p_key || ':' || (SELECT count(*) FROM sim.provider_charge
                                                       WHERE idempotency_key = p_key)), 1, 20);
    INSERT INTO sim.provider_charge (id, idempotency_key, payment_ref, amount_cents, currency,
                                     created_at)
    VALUES (charge_id, p_key, p_payment_ref, p_amount_cents, p_currency, p_now);
    replayed := false;
END
$$;

-- Refund part or all of a charge; a repeated key returns the first refund.
CREATE FUNCTION sim.provider_refund(p_key text, p_charge_id text, p_amount_cents bigint,
                                    p_now timestamptz, OUT refund_id text, OUT replayed boolean)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_charge sim.provider_charge%ROWTYPE;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('sim.refund:' || p_key, 0));
    SELECT id INTO refund_id FROM sim.provider_refund WHERE idempotency_key = p_key;
    IF FOUND THEN
        replayed := true;
        RETURN;
    END IF;
    SELECT * INTO v_charge FROM sim.provider_charge WHERE id = p_charge_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no such charge: %', p_charge_id USING ERRCODE = 'P0002';
    END IF;
    IF v_charge.refunded_cents + p_amount_cents > v_charge.amount_cents THEN
        RAISE EXCEPTION 'refund exceeds charge % (% + % > %)', p_charge_id,
              v_charge.refunded_cents, p_amount_cents, v_charge.amount_cents
              USING ERRCODE = '22003';
    END IF;
    refund_id := 're_' || substr(md5(p_key), 1, 20);
    INSERT INTO sim.provider_refund (id, idempotency_key, charge_id, amount_cents, created_at)
    VALUES (refund_id, p_key, p_charge_id, p_amount_cents, p_now);
    UPDATE sim.provider_charge
       SET refunded_cents = refunded_cents + p_amount_cents,
           status = CASE WHEN refunded_cents + p_amount_cents = amount_cents THEN 'refunded'
                         ELSE 'partially_refunded' END
     WHERE id = p_charge_id;
    replayed := false;
END
$$;

-- Reconciliation ----------------------------------------------------------------------------
-- Compares our ledger with the provider's records, set-based, and writes one run and its
-- mismatches of every kind in DESIGN §2 into Redrive's tables. Returns the run id.
CREATE FUNCTION sim.run_reconciliation(p_now timestamptz DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
    v_run bigint;
    v_checked integer;
    v_found integer;
BEGIN
    INSERT INTO redrive.reconciliation_run (provider, started_at, window_end)
    VALUES ('simulated-provider', v_now, v_now)
    RETURNING id INTO v_run;

    WITH ours AS (
        SELECT p.*, o.id AS order_ref FROM sim.ledger_payment p JOIN sim.ledger_order o ON o.id = p.order_id
    ), theirs AS (
        SELECT c.*, count(*) OVER (PARTITION BY c.payment_ref) AS charges_for_payment,
               row_number() OVER (PARTITION BY c.payment_ref ORDER BY c.created_at, c.id) AS nth
          FROM sim.provider_charge c
    ), found AS (
        -- The provider charged, and we have no record of that charge (the hard window).
        SELECT 'missing_internal' AS kind, t.payment_ref, o.order_ref, o.amount_cents AS ia,
               t.amount_cents AS ea, o.currency AS ic, t.currency AS ec, o.status AS ist,
               t.status AS est, to_jsonb(o) AS irec, to_jsonb(t) - 'charges_for_payment' - 'nth' AS erec
          FROM theirs t LEFT JOIN ours o ON o.id = t.payment_ref
         WHERE t.nth = 1 AND (o.id IS NULL OR o.provider_charge_id IS NULL)
        UNION ALL
        -- We recorded a charge the provider does not have.
        SELECT 'missing_external', o.id, o.order_ref, o.amount_cents, NULL, o.currency, NULL,
               o.status, NULL, to_jsonb(o), NULL
          FROM ours o
         WHERE o.provider_charge_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM sim.provider_charge c WHERE c.id = o.provider_charge_id)
        UNION ALL
        -- More than one charge for one payment: a double charge.
        SELECT 'duplicate_external', t.payment_ref, o.order_ref, o.amount_cents, t.amount_cents,
               o.currency, t.currency, o.status, t.status, to_jsonb(o),
               to_jsonb(t) - 'charges_for_payment' - 'nth'
          FROM theirs t LEFT JOIN ours o ON o.id = t.payment_ref
         WHERE t.nth = 2
        UNION ALL
        SELECT CASE WHEN o.currency <> c.currency THEN 'currency_mismatch'
                    WHEN o.amount_cents <> c.amount_cents THEN 'amount_mismatch'
                    ELSE 'status_mismatch' END,
               o.id, o.order_ref, o.amount_cents, c.amount_cents, o.currency, c.currency,
               o.status, c.status, to_jsonb(o), to_jsonb(c)
          FROM ours o JOIN sim.provider_charge c ON c.id = o.provider_charge_id
         WHERE o.currency <> c.currency OR o.amount_cents <> c.amount_cents
            OR (CASE o.status WHEN 'processing' THEN 'succeeded' WHEN 'pending' THEN 'succeeded'
                              ELSE o.status END) <> c.status
    ), inserted AS (
        INSERT INTO redrive.reconciliation_mismatch
               (run_id, kind, payment_ref, order_ref, internal_amount_cents,
                external_amount_cents, internal_currency, external_currency, internal_status,
                external_status, internal_record, external_record, detected_at)
        SELECT v_run, f.kind, f.payment_ref, f.order_ref, f.ia, f.ea, f.ic, f.ec, f.ist, f.est,
               f.irec, f.erec, v_now
          FROM found f
         -- Report a mismatch once while it stays open.
         WHERE NOT EXISTS (SELECT 1 FROM redrive.reconciliation_mismatch m
                            WHERE m.kind = f.kind AND m.payment_ref IS NOT DISTINCT FROM f.payment_ref
                              AND m.status <> 'resolved')
        RETURNING 1)
    SELECT count(*) INTO v_found FROM inserted;

    SELECT count(*) INTO v_checked FROM sim.ledger_payment;
    UPDATE redrive.reconciliation_run
       SET status = 'succeeded', finished_at = v_now,
           checked_count = v_checked, mismatch_count = v_found
     WHERE id = v_run;
    RETURN v_run;
END
$$;
