-- SPDX-License-Identifier: GPL-3.0-or-later
-- The simulated world answers the payments contract of Redrive's version 8
-- (docs/domain.md "Money"): every provider charge of a payment (a double charge shows as two)
-- and the provider's refund ledger, and its reconciliation names the provider charges each
-- mismatch is about, so a compensation from a double charge refunds the second charge.
CREATE OR REPLACE VIEW redrive.payment_charge_list AS
SELECT c.payment_ref, c.id AS charge_ref, c.amount_cents AS charged_minor,
       c.refunded_cents AS refunded_minor, c.currency, c.created_at AS charged_at,
       c.id = p.charge_ref AS is_primary
  FROM redrive.payment_list p
  JOIN sim.provider_charge c ON c.payment_ref = p.payment_ref OR c.id = p.charge_ref;

CREATE OR REPLACE VIEW redrive.payment_refund_list AS
SELECT c.payment_ref, r.charge_id AS charge_ref, r.id AS refund_ref, r.amount_cents AS amount_minor,
       r.created_at AS refunded_at
  FROM sim.provider_refund r JOIN sim.provider_charge c ON c.id = r.charge_id;

-- As in version 1, and each mismatch names the provider charges it is about: ours (the ledger's
-- provider_charge_id) and theirs (for duplicate_external, the charge our ledger did not record).
CREATE OR REPLACE FUNCTION sim.run_reconciliation(p_now timestamptz DEFAULT NULL)
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
               t.status AS est, to_jsonb(o) AS irec, to_jsonb(t) - 'charges_for_payment' - 'nth' AS erec,
               o.provider_charge_id AS icharge, t.id AS echarge
          FROM theirs t LEFT JOIN ours o ON o.id = t.payment_ref
         WHERE t.nth = 1 AND (o.id IS NULL OR o.provider_charge_id IS NULL)
        UNION ALL
        -- We recorded a charge the provider does not have.
        SELECT 'missing_external', o.id, o.order_ref, o.amount_cents, NULL, o.currency, NULL,
               o.status, NULL, to_jsonb(o), NULL, o.provider_charge_id, NULL
          FROM ours o
         WHERE o.provider_charge_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM sim.provider_charge c WHERE c.id = o.provider_charge_id)
        UNION ALL
        -- More than one charge for one payment: a double charge. The duplicate is the first
        -- charge our ledger did not record (the one it recorded is the payment's charge).
        SELECT 'duplicate_external', t.payment_ref, o.order_ref, o.amount_cents, t.amount_cents,
               o.currency, t.currency, o.status, t.status, to_jsonb(o),
               to_jsonb(t) - 'charges_for_payment' - 'nth' - 'recorded_first', o.provider_charge_id,
               t.id
          FROM (SELECT t.*, row_number() OVER (
                           PARTITION BY t.payment_ref
                           ORDER BY coalesce(t.id = r.provider_charge_id, false) DESC,
                                    t.created_at, t.id) AS recorded_first
                  FROM theirs t LEFT JOIN ours r ON r.id = t.payment_ref) t
          LEFT JOIN ours o ON o.id = t.payment_ref
         WHERE t.recorded_first = 2
        UNION ALL
        SELECT CASE WHEN o.currency <> c.currency THEN 'currency_mismatch'
                    WHEN o.amount_cents <> c.amount_cents THEN 'amount_mismatch'
                    ELSE 'status_mismatch' END,
               o.id, o.order_ref, o.amount_cents, c.amount_cents, o.currency, c.currency,
               o.status, c.status, to_jsonb(o), to_jsonb(c), o.provider_charge_id, c.id
          FROM ours o JOIN sim.provider_charge c ON c.id = o.provider_charge_id
         WHERE o.currency <> c.currency OR o.amount_cents <> c.amount_cents
            OR (CASE o.status WHEN 'processing' THEN 'succeeded' WHEN 'pending' THEN 'succeeded'
                              ELSE o.status END) <> c.status
    ), inserted AS (
        INSERT INTO redrive.reconciliation_mismatch
               (run_id, kind, payment_ref, order_ref, internal_amount_cents,
                external_amount_cents, internal_currency, external_currency, internal_status,
                external_status, internal_record, external_record, detected_at,
                internal_charge_ref, external_charge_ref)
        SELECT v_run, f.kind, f.payment_ref, f.order_ref, f.ia, f.ea, f.ic, f.ec, f.ist, f.est,
               f.irec, f.erec, v_now, f.icharge, f.echarge
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
