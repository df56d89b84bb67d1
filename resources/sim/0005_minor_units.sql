-- SPDX-License-Identifier: GPL-3.0-or-later
-- The simulated world names money in minor units, as Redrive does from migration 21
-- (docs/domain.md#money): every `cents` column, parameter and JSON key says `minor`. The
-- amounts do not change. Redrive's core migration 21 renamed the reconciliation_mismatch
-- columns run_reconciliation and generate_scale_world write, so both are created again here;
-- run_reconciliation's record of our side now also names the order's customer, as a ledger
-- would, so a refund from a mismatch says whose money it is.
-- redrive.payment_list is this world's own view of its payments (the site's contract view):
-- its amount columns are renamed in place, which a site may do the same way.

ALTER TABLE sim.ledger_order RENAME COLUMN amount_cents TO amount_minor;
ALTER TABLE sim.ledger_order
    RENAME CONSTRAINT ledger_order_amount_cents_check TO ledger_order_amount_minor_check;
ALTER TABLE sim.ledger_payment RENAME COLUMN amount_cents TO amount_minor;
ALTER TABLE sim.ledger_payment RENAME COLUMN refunded_cents TO refunded_minor;
ALTER TABLE sim.ledger_payment
    RENAME CONSTRAINT ledger_payment_amount_cents_check TO ledger_payment_amount_minor_check;
ALTER TABLE sim.provider_charge RENAME COLUMN amount_cents TO amount_minor;
ALTER TABLE sim.provider_charge RENAME COLUMN refunded_cents TO refunded_minor;
ALTER TABLE sim.provider_refund RENAME COLUMN amount_cents TO amount_minor;
ALTER TABLE sim.provider_refund
    RENAME CONSTRAINT provider_refund_amount_cents_check TO provider_refund_amount_minor_check;

ALTER VIEW redrive.payment_list RENAME COLUMN charged_cents TO charged_minor;
ALTER VIEW redrive.payment_list RENAME COLUMN refunded_cents TO refunded_minor;
-- The same view, its charge subquery written with the new column names.
CREATE OR REPLACE VIEW redrive.payment_list AS
SELECT p.id AS payment_ref, c.id AS charge_ref, c.amount_minor AS charged_minor,
       c.refunded_minor, c.currency
  FROM sim.ledger_payment p
  JOIN LATERAL (SELECT pc.id, pc.amount_minor, pc.refunded_minor, pc.currency
                  FROM sim.provider_charge pc
                 WHERE pc.id = p.provider_charge_id
                    OR (p.provider_charge_id IS NULL AND pc.payment_ref = p.id)
                 ORDER BY pc.created_at, pc.id
                 LIMIT 1) c ON true;

-- The provider's charge and refund calls: p_amount_cents becomes p_amount_minor (a parameter
-- cannot be renamed in place; the same settings, and the default grants as before).
DROP FUNCTION sim.provider_charge(text, text, bigint, text, timestamptz);
DROP FUNCTION sim.provider_refund(text, text, bigint, timestamptz);

CREATE FUNCTION sim.provider_charge(p_key text, p_payment_ref text, p_amount_minor bigint, p_currency text, p_now timestamp with time zone, OUT charge_id text, OUT replayed boolean)
 RETURNS record
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
    INSERT INTO sim.provider_charge (id, idempotency_key, payment_ref, amount_minor, currency,
                                     created_at)
    VALUES (charge_id, p_key, p_payment_ref, p_amount_minor, p_currency, p_now);
    replayed := false;
END
$function$

;

CREATE FUNCTION sim.provider_refund(p_key text, p_charge_id text, p_amount_minor bigint, p_now timestamp with time zone, OUT refund_id text, OUT replayed boolean)
 RETURNS record
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
    IF v_charge.refunded_minor + p_amount_minor > v_charge.amount_minor THEN
        RAISE EXCEPTION 'refund exceeds charge % (% + % > %)', p_charge_id,
              v_charge.refunded_minor, p_amount_minor, v_charge.amount_minor
              USING ERRCODE = '22003';
    END IF;
    refund_id := 're_' || substr(md5(p_key), 1, 20);
    INSERT INTO sim.provider_refund (id, idempotency_key, charge_id, amount_minor, created_at)
    VALUES (refund_id, p_key, p_charge_id, p_amount_minor, p_now);
    UPDATE sim.provider_charge
       SET refunded_minor = refunded_minor + p_amount_minor,
           status = CASE WHEN refunded_minor + p_amount_minor = amount_minor THEN 'refunded'
                         ELSE 'partially_refunded' END
     WHERE id = p_charge_id;
    replayed := false;
END
$function$

;

-- Bodies that name the renamed columns or write amount_cents keys.

CREATE OR REPLACE FUNCTION sim.run_reconciliation(p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS bigint
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
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
        SELECT p.*, o.id AS order_ref, o.customer
          FROM sim.ledger_payment p JOIN sim.ledger_order o ON o.id = p.order_id
    ), theirs AS (
        SELECT c.*, count(*) OVER (PARTITION BY c.payment_ref) AS charges_for_payment,
               row_number() OVER (PARTITION BY c.payment_ref ORDER BY c.created_at, c.id) AS nth
          FROM sim.provider_charge c
    ), found AS (
        -- The provider charged, and we have no record of that charge (the hard window).
        SELECT 'missing_internal' AS kind, t.payment_ref, o.order_ref, o.amount_minor AS ia,
               t.amount_minor AS ea, o.currency AS ic, t.currency AS ec, o.status AS ist,
               t.status AS est, to_jsonb(o) AS irec, to_jsonb(t) - 'charges_for_payment' - 'nth' AS erec,
               o.provider_charge_id AS icharge, t.id AS echarge
          FROM theirs t LEFT JOIN ours o ON o.id = t.payment_ref
         WHERE t.nth = 1 AND (o.id IS NULL OR o.provider_charge_id IS NULL)
        UNION ALL
        -- We recorded a charge the provider does not have.
        SELECT 'missing_external', o.id, o.order_ref, o.amount_minor, NULL, o.currency, NULL,
               o.status, NULL, to_jsonb(o), NULL, o.provider_charge_id, NULL
          FROM ours o
         WHERE o.provider_charge_id IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM sim.provider_charge c WHERE c.id = o.provider_charge_id)
        UNION ALL
        -- More than one charge for one payment: a double charge. The duplicate is the first
        -- charge our ledger did not record (the one it recorded is the payment's charge).
        SELECT 'duplicate_external', t.payment_ref, o.order_ref, o.amount_minor, t.amount_minor,
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
                    WHEN o.amount_minor <> c.amount_minor THEN 'amount_mismatch'
                    ELSE 'status_mismatch' END,
               o.id, o.order_ref, o.amount_minor, c.amount_minor, o.currency, c.currency,
               o.status, c.status, to_jsonb(o), to_jsonb(c), o.provider_charge_id, c.id
          FROM ours o JOIN sim.provider_charge c ON c.id = o.provider_charge_id
         WHERE o.currency <> c.currency OR o.amount_minor <> c.amount_minor
            OR (CASE o.status WHEN 'processing' THEN 'succeeded' WHEN 'pending' THEN 'succeeded'
                              ELSE o.status END) <> c.status
    ), inserted AS (
        INSERT INTO redrive.reconciliation_mismatch
               (run_id, kind, payment_ref, order_ref, internal_amount_minor,
                external_amount_minor, internal_currency, external_currency, internal_status,
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
$function$

;

CREATE OR REPLACE FUNCTION sim.generate_scale_world(p_dead_letters bigint DEFAULT 1000000, p_attempts_per_dead_letter integer DEFAULT 5, p_keys bigint DEFAULT 1000000, p_mismatches bigint DEFAULT 100000, p_audit_entries bigint DEFAULT 1000000, p_seed double precision DEFAULT 0.42)
 RETURNS TABLE(what text, rows bigint, seconds numeric)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_end timestamptz := date_trunc('minute', now());
    v_start timestamptz := date_trunc('minute', now()) - interval '30 days';
    v_clock timestamptz := clock_timestamp();
    v_began timestamptz := clock_timestamp();
    v_count bigint;
    v_job0 bigint;
    v_run0 bigint;
    v_tail integer;
    v_linked bigint;
    v_bad bigint;
    -- Incident windows: the failure group each one floods, its length, its share of all dead
    -- letters (the rest, 45 %, is background spread over the 30 days).
    v_inc_gid integer[] := ARRAY[1, 5, 7, 11, 2, 12];
    v_inc_len interval[] := ARRAY[interval '3 hours', interval '90 minutes', interval '5 hours',
                                  interval '2 hours', interval '4 hours', interval '6 hours'];
    v_src_cum double precision[] := ARRAY[0, 0.45, 0.57, 0.63, 0.73, 0.80, 0.93];
    v_inc_at timestamptz[];
    v_index_drop text[];
    v_index_create text[];
    v_statement text;
    v_operators text[] := ARRAY['ada', 'bjorn', 'chen', 'dara', 'elif', 'femi', 'greta', 'hiro',
                                'ines', 'jonas', 'kemal', 'lena'];
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION 'sim.generate_scale_world needs a superuser'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'It loads with session_replication_role = replica.';
    END IF;
    IF p_dead_letters < 1 OR p_attempts_per_dead_letter < 1 OR p_keys < 0 OR p_mismatches < 0
       OR p_audit_entries < 0 THEN
        RAISE EXCEPTION 'sim.generate_scale_world: counts must not be negative, and there must be at least one dead letter and one attempt each'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    LOCK TABLE redrive.job, redrive.attempt, redrive.dead_letter, redrive.failure_group,
               redrive.idempotency_key, redrive.reconciliation_run,
               redrive.reconciliation_mismatch IN ACCESS EXCLUSIVE MODE;
    IF EXISTS (SELECT 1 FROM redrive.dead_letter) THEN
        RAISE EXCEPTION 'sim.generate_scale_world needs an empty redrive.dead_letter'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Run it on a freshly migrated database.';
    END IF;

    PERFORM set_config('work_mem', '256MB', true);
    PERFORM set_config('maintenance_work_mem', '1GB', true);
    PERFORM setseed(p_seed);
    -- Ordinary triggers and foreign-key checks off for the bulk load (until the audit phase).
    PERFORM set_config('session_replication_role', 'replica', true);

    SELECT coalesce(max(id), 0) INTO v_job0 FROM redrive.job;
    SELECT coalesce(max(id), 0) INTO v_run0 FROM redrive.reconciliation_run;
    SELECT array_agg(v_start + interval '1 day' + random() * interval '28 days' ORDER BY i)
      INTO v_inc_at FROM generate_series(1, 6) AS i;

    -- Secondary indexes of the bulk-loaded tables are dropped and rebuilt after the load, with
    -- exactly the definitions pg_indexes shows (unique and constraint indexes stay).
    SELECT array_agg(format('DROP INDEX %s', i.indexrelid::regclass) ORDER BY i.indexrelid),
           array_agg(pg_get_indexdef(i.indexrelid)
                     || CASE WHEN obj_description(i.indexrelid, 'pg_class') IS NOT NULL
                             THEN format('; COMMENT ON INDEX %s IS %L', i.indexrelid::regclass,
                                         obj_description(i.indexrelid, 'pg_class'))
                             ELSE '' END
                     ORDER BY i.indexrelid)
      INTO v_index_drop, v_index_create
      FROM pg_index i
      JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = 'redrive'
       AND t.relname IN ('job', 'attempt', 'dead_letter', 'idempotency_key',
                         'reconciliation_mismatch')
       AND NOT i.indisunique
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid);
    FOREACH v_statement IN ARRAY coalesce(v_index_drop, '{}') LOOP
        EXECUTE v_statement;
    END LOOP;

    -- Failure groups --------------------------------------------------------------------------
    -- 13 head groups (the failures of the reference worker) hold 80 % of the draws; a Zipf
    -- tail of small groups (about one per 500 dead letters) the other 20 %.
    CREATE TEMP TABLE scale_group (
        gid         integer PRIMARY KEY,
        queue       text    NOT NULL,
        kind        text    NOT NULL,
        error_class text    NOT NULL,
        error_code  text    NOT NULL,
        reason      text    NOT NULL,
        outcome     text    NOT NULL,
        template    text    NOT NULL,
        key_prefix  text    NOT NULL,
        stack       text,
        dur_ms      integer NOT NULL,
        backoff_ms  integer NOT NULL,
        weight      double precision NOT NULL,
        cum         double precision,
        fingerprint text
    ) ON COMMIT DROP;

    INSERT INTO scale_group (gid, queue, kind, error_class, error_code, reason, outcome, template,
                             key_prefix, stack, dur_ms, backoff_ms, weight)
    VALUES
      (1, 'payments', 'charge_card', 'transient', 'provider_unavailable', 'exhausted', 'failed',
       '503 Service Unavailable from POST /v1/charges (provider incident in progress)',
       'charge:pay_', 'ProviderHttpError', 800, 2000, 0.06),
      (2, 'payments', 'charge_card', 'ambiguous', 'timeout_after_send', 'ambiguous', 'failed',
       'read timeout after {ms} ms on POST /v1/charges for {pay}: the request may have been processed',
       'charge:pay_', 'ReadTimeout', 30000, 2000, 0.10),
      (3, 'payments', 'charge_card', 'permanent', 'card_declined', 'permanent', 'failed',
       '402 card_declined: insufficient_funds for payment {pay}',
       'charge:pay_', 'CardDeclined', 600, 2000, 0.22),
      (4, 'payments', 'charge_card', 'permanent', 'invalid_request', 'permanent', 'failed',
       '400 invalid_request: amount {n} must be at least 50 in USD',
       'charge:pay_', 'ProviderValidationError', 300, 2000, 0.05),
      (5, 'payments', 'charge_card', 'transient', 'rate_limited', 'exhausted', 'failed',
       '429 Too Many Requests from POST /v1/charges (Retry-After: {n} s)',
       'charge:pay_', 'ProviderHttpError', 200, 2000, 0.04),
      (6, 'payments', 'charge_card', 'transient', 'connection_refused', 'exhausted', 'failed',
       'connect ECONNREFUSED 10.20.0.7:443 (api.provider.example)',
       'charge:pay_', 'ConnectError', 50, 2000, 0.05),
      (7, 'notifications', 'send_receipt', 'transient', 'smtp_connect', 'exhausted', 'failed',
       'connect timeout to smtp.mail.example:587 after {ms} ms',
       'receipt:pay_', 'SmtpConnectError', 10000, 5000, 0.04),
      (8, 'notifications', 'send_receipt', 'permanent', 'invalid_recipient', 'permanent', 'failed',
       '550 5.1.1 <{email}>: recipient address rejected',
       'receipt:pay_', 'SmtpRejected', 900, 5000, 0.08),
      (9, 'notifications', 'send_receipt', 'ambiguous', 'smtp_timeout_after_data', 'ambiguous',
       'failed', 'timeout waiting for 250 after DATA (message may have been delivered to {email})',
       'receipt:pay_', 'SmtpTimeout', 60000, 5000, 0.02),
      (10, 'webhooks', 'process_webhook', 'permanent', 'schema_validation', 'permanent', 'failed',
       'unknown event type ''charge.dispute.created'' in evt_{pay}_dispute',
       'evt_pay_', 'SchemaValidationError', 40, 1000, 0.06),
      (11, 'webhooks', 'process_webhook', 'transient', '40001', 'exhausted', 'failed',
       'could not serialize access due to concurrent update of payment {pay}',
       'evt_pay_', 'SerializationFailure', 120, 1000, 0.03),
      (12, 'ledger', 'sync_ledger', 'transient', 'partial_batch', 'exhausted', 'failed',
       '{k} of 20 items failed in batch batch_{p}: ledger API returned 503',
       'sync:batch_', 'PartialBatchFailure', 4000, 10000, 0.03),
      (13, 'payments', 'charge_card', 'ambiguous', 'lease_expired', 'ambiguous', 'abandoned',
       'lease of worker worker-{n} expired without a result (last heartbeat {ms} ms before)',
       'charge:pay_', NULL, 30000, 2000, 0.02);

    v_tail := greatest(20, least(5000, p_dead_letters / 500))::integer;
    INSERT INTO scale_group (gid, queue, kind, error_class, error_code, reason, outcome, template,
                             key_prefix, stack, dur_ms, backoff_ms, weight)
    SELECT 14 + t.t, s.queue, s.kind, s.error_class, s.error_code, s.reason, 'failed',
           replace(s.template, '{partner}', t.name), s.key_prefix, s.stack, s.dur_ms,
           s.backoff_ms,
           0.20 * power(t.t + 1, -1.1) / sum(power(t.t + 1, -1.1)) OVER ()
      FROM (SELECT i AS t,
                   (ARRAY['ka', 'lo', 'mi', 'ra', 'zu', 'ne', 'to', 'vi', 'sa', 'pe', 'do', 'ri',
                          'fu', 'ga', 'he', 'jo', 'lu', 'mo', 'ny', 'qi', 'be', 'wa', 'xe',
                          'yo'])[1 + i % 24]
                   || (ARRAY['ka', 'lo', 'mi', 'ra', 'zu', 'ne', 'to', 'vi', 'sa', 'pe', 'do',
                             'ri', 'fu', 'ga', 'he', 'jo', 'lu', 'mo', 'ny', 'qi', 'be', 'wa',
                             'xe', 'yo'])[1 + (i / 24) % 24]
                   || (ARRAY['ka', 'lo', 'mi', 'ra', 'zu', 'ne', 'to', 'vi', 'sa', 'pe', 'do',
                             'ri', 'fu', 'ga', 'he', 'jo', 'lu', 'mo', 'ny', 'qi', 'be', 'wa',
                             'xe', 'yo'])[1 + (i / 576) % 24] AS name
              FROM generate_series(0, v_tail - 1) AS i) AS t
      JOIN (VALUES
        (0, 'integrations', 'deliver_webhook', 'transient', 'http_503', 'exhausted',
         'POST https://{partner}.partner.example/hooks returned 503 after {ms} ms',
         'delivery:dlv_', 'PartnerHttpError', 5000, 3000),
        (1, 'integrations', 'deliver_webhook', 'permanent', 'http_410', 'permanent',
         'POST https://{partner}.partner.example/hooks returned 410 Gone for account {ord}',
         'delivery:dlv_', 'PartnerHttpError', 400, 3000),
        (2, 'webhooks', 'process_webhook', 'permanent', 'schema_validation', 'permanent',
         'unknown event type ''{partner}.updated'' in evt_{pay}',
         'evt_pay_', 'SchemaValidationError', 40, 1000),
        (3, 'integrations', 'sync_inventory', 'permanent', 'sku_not_found', 'permanent',
         'warehouse {partner}: sku {n} not found for order {ord}',
         'inventory:ord_', 'InventoryError', 700, 3000),
        (4, 'payments', 'calculate_tax', 'permanent', 'unsupported_region', 'permanent',
         'tax service rejected region ''{partner}'' for order {ord}: unsupported jurisdiction',
         'tax:ord_', 'TaxServiceError', 250, 2000),
        (5, 'integrations', 'update_crm', 'transient', 'crm_locked', 'exhausted',
         'crm account {partner} is locked by another import (lock {uuid})',
         'crm:acct_', 'CrmLockedError', 1500, 3000),
        (6, 'notifications', 'send_sms', 'permanent', 'carrier_rejected', 'permanent',
         'carrier {partner} rejected message to +{p}: unknown subscriber',
         'sms:msg_', 'CarrierError', 900, 5000),
        (7, 'ledger', 'export_invoice', 'ambiguous', 'export_timeout', 'ambiguous',
         'export of invoice inv_{p} to {partner} timed out after {ms} ms; it may have been filed',
         'invoice:inv_', 'ExportTimeout', 20000, 10000))
        AS s (shape, queue, kind, error_class, error_code, reason, template, key_prefix, stack,
              dur_ms, backoff_ms)
        ON s.shape = t.t % 8;

    -- Draw thresholds (lower edge of each group's share) and fingerprints, once per group.
    UPDATE scale_group g
       SET cum = c.cum,
           fingerprint = redrive.failure_fingerprint(
               g.kind, g.error_class, g.error_code,
               sim.scale_message(g.template, 500001, 42, 30000)),
           stack = CASE WHEN g.stack IS NOT NULL THEN
                       g.stack || ': ' || g.error_code
                       || E'\n    at ' || g.kind || ' (handlers/' || g.queue || '.cpp:'
                       || (100 + g.gid * 7 % 400) || ')'
                       || E'\n    at redrive::worker::JobRunner::runOne (job_runner.cpp:262)'
                       || E'\n    at redrive::worker::JobRunner::runDueBatch (job_runner.cpp:201)'
                   END
      FROM (SELECT gid, coalesce(sum(weight) OVER (ORDER BY gid ROWS BETWEEN UNBOUNDED PRECEDING
                                                               AND 1 PRECEDING), 0) AS cum
              FROM scale_group) c
     WHERE c.gid = g.gid;

    -- The plan: one row per dead letter ---------------------------------------------------------
    CREATE TEMP TABLE scale_plan (
        n            bigint      NOT NULL,
        gid          integer     NOT NULL,
        dead_at      timestamptz NOT NULL,
        attempts     integer     NOT NULL,
        first_start  timestamptz NOT NULL,
        jitter       double precision NOT NULL,
        dur_last     integer     NOT NULL,
        num          integer     NOT NULL,
        ms           integer     NOT NULL,
        amount       bigint      NOT NULL,
        currency     text        NOT NULL,
        status       text        NOT NULL,
        resolution   text,
        actor        text,
        touched_at   timestamptz,
        last_error   text        NOT NULL,
        idem_key     text        NOT NULL
    ) ON COMMIT DROP;

    -- Attempt counts: permanent failures die after 1 (sometimes 2) attempts, ambiguous ones
    -- after a few, transient ones exhaust their budget; the counts are scaled by cumulative
    -- rounding so that they add up to exactly p_dead_letters * p_attempts_per_dead_letter.
    INSERT INTO scale_plan
    WITH cfg AS MATERIALIZED (
        SELECT (SELECT array_agg(cum ORDER BY gid) FROM scale_group) AS grp_cum
    ), placed AS (
        -- Materialized (it draws random numbers), so only the group number travels on, not
        -- the threshold array it was picked from.
        SELECT r.n, r.r_w,
               CASE WHEN r.src > 1 AND r.r_spill < 0.85 THEN v_inc_gid[r.src - 1]
                    ELSE width_bucket(r.r_pick, c.grp_cum) END AS gid,
               CASE WHEN r.src = 1 THEN v_start + (v_end - v_start) * r.r_time
                    ELSE v_inc_at[r.src - 1]
                         + v_inc_len[r.src - 1] * ((r.r_time + r.r_time2) / 2) END AS dead_at
          FROM (SELECT n, width_bucket(random(), v_src_cum) AS src, random() AS r_time,
                       random() AS r_time2, random() AS r_pick, random() AS r_spill,
                       random() AS r_w
                  FROM generate_series(1, p_dead_letters) AS n) r
         CROSS JOIN cfg c
    ), weighted AS (
        SELECT p.*,
               CASE g.error_class WHEN 'permanent' THEN CASE WHEN p.r_w < 0.75 THEN 0 ELSE 1 END
                                  WHEN 'ambiguous' THEN 1 + 3 * p.r_w
                                  ELSE 5 + 4 * p.r_w END AS w
          FROM placed p JOIN scale_group g ON g.gid = p.gid
    ), counted AS (
        SELECT w.*, sum(w.w) OVER (ORDER BY w.n ROWS UNBOUNDED PRECEDING) AS cw,
               sum(w.w) OVER () AS tw
          FROM weighted w
    ), drawn AS (
        SELECT c.n, c.gid, least(c.dead_at, v_end) AS dead_at,
               date_part('epoch', v_end - least(c.dead_at, v_end)) / (30 * 86400) AS age,
               1 + (round(c.cw * s.scale) - round((c.cw - c.w) * s.scale))::integer AS attempts,
               0.75 + 0.5 * random() AS jitter, random() AS r_dur, 1 + floor(random() * 999)::integer AS num,
               random() AS r_ms, random() AS r_amount, random() AS r_cur, random() AS r_status,
               random() AS r_sub, random() AS r_actor, random() AS r_touch
          FROM counted c
         CROSS JOIN LATERAL (SELECT CASE WHEN c.tw > 0
                                         THEN p_dead_letters::double precision
                                              * (p_attempts_per_dead_letter - 1) / c.tw
                                         ELSE 0 END AS scale) s
    ), decided AS (
        SELECT d.*, g.dur_ms, g.backoff_ms, g.template, g.key_prefix,
               (CASE WHEN g.dur_ms >= 10000 THEN g.dur_ms ELSE 100 + g.dur_ms * 3 END
                + floor(d.r_ms * 900))::integer AS ms,
               CASE
                   WHEN d.r_status < 0.40 * d.age
                   THEN CASE WHEN d.r_sub < 0.70 THEN 'resolved'
                             WHEN d.r_sub < 0.92 THEN 'compensated'
                             ELSE 'requeued' END
                   WHEN d.r_status < 0.40 * d.age + 0.020 THEN 'requeued'
                   WHEN d.r_status < 0.40 * d.age + 0.025 THEN 'compensation_pending'
                   WHEN d.r_status < 0.40 * d.age + 0.027 THEN 'compensating'
                   ELSE 'open'
               END AS status,
               (g.dur_ms * (0.6 + 0.4 * d.r_dur))::integer AS dur_last
          FROM drawn d JOIN scale_group g ON g.gid = d.gid
    )
    SELECT d.n, d.gid, d.dead_at, d.attempts,
           d.dead_at - (d.dur_last + round(d.backoff_ms * d.jitter
                                           * sim.scale_backoff_units(d.attempts))
                        + (d.attempts - 1) * d.dur_ms) * interval '1 millisecond',
           d.jitter, d.dur_last, d.num, d.ms,
           500 + floor(49500 * d.r_amount ^ 3)::bigint,
           CASE WHEN d.r_cur < 0.85 THEN 'USD' WHEN d.r_cur < 0.95 THEN 'EUR' ELSE 'GBP' END,
           d.status,
           CASE d.status
               WHEN 'resolved' THEN (ARRAY['fixed_by_hand', 'not_needed', 'duplicate',
                                           'succeeded_after_requeue'])[
                                        width_bucket(d.r_sub / 0.70,
                                                     ARRAY[0, 0.4, 0.7, 0.85]::float8[])]
               WHEN 'compensated' THEN 'compensated'
           END,
           CASE WHEN d.status <> 'open' OR d.r_touch < 0.04
                THEN v_operators[1 + floor(12 * d.r_actor ^ 2)::integer] END,
           CASE WHEN d.status <> 'open' OR d.r_touch < 0.04
                THEN least(v_end, d.dead_at + interval '1 minute'
                                  + (v_end - d.dead_at) * (d.r_touch ^ 3)) END,
           sim.scale_message(d.template, 500000 + d.n, d.num, d.ms),
           d.key_prefix || (500000 + d.n)
      FROM decided d;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    ANALYZE scale_plan;

    -- Every group's messages must share its fingerprint: check a sample of rows.
    SELECT count(*) INTO v_bad
      FROM scale_plan p JOIN scale_group g ON g.gid = p.gid
     WHERE p.n % greatest(1, p_dead_letters / 5000) = 0
       AND redrive.failure_fingerprint(g.kind, g.error_class, g.error_code, p.last_error)
           <> g.fingerprint;
    IF v_bad > 0 THEN
        RAISE EXCEPTION 'sim.generate_scale_world: % sampled messages left their group', v_bad;
    END IF;
    what := 'plan'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    INSERT INTO redrive.failure_group (fingerprint, kind, error_class, error_code, sample_message,
                                       first_seen)
    SELECT g.fingerprint, min(g.kind), min(g.error_class), min(g.error_code),
           min(p.last_error), min(s.first_seen)
      FROM (SELECT gid, min(dead_at) AS first_seen, max(dead_at) AS last_seen, min(n) AS first_n
              FROM scale_plan GROUP BY gid) s
      JOIN scale_group g ON g.gid = s.gid
      JOIN scale_plan p ON p.n = s.first_n
     GROUP BY g.fingerprint;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    what := 'failure groups'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    -- Jobs -------------------------------------------------------------------------------------
    INSERT INTO redrive.job (id, queue, kind, payload, headers, idempotency_key, entity_id,
                             event_seq, event_at, state, attempt, max_attempts, run_at,
                             deadline_at, heartbeat_at, last_error, created_at, updated_at)
    OVERRIDING SYSTEM VALUE
    SELECT v_job0 + p.n, g.queue, g.kind,
           CASE g.queue
               WHEN 'payments' THEN jsonb_build_object(
                   'payment_id', 'pay_' || (500000 + p.n), 'order_id', 'ord_' || (100000 + p.n),
                   'amount_minor', p.amount, 'currency', p.currency)
               WHEN 'notifications' THEN jsonb_build_object(
                   'payment_id', 'pay_' || (500000 + p.n), 'template', 'receipt',
                   'to', substring(p.last_error FROM '[^ <>()]+@[^ <>()]+'))
               WHEN 'webhooks' THEN jsonb_build_object(
                   'event_id', 'evt_pay_' || (500000 + p.n), 'type',
                   CASE WHEN g.error_code = 'schema_validation'
                        THEN substring(p.last_error FROM '''([^'']+)''')
                        ELSE 'charge.succeeded' END,
                   'payment_id', 'pay_' || (500000 + p.n), 'seq', 1 + p.n % 4)
               WHEN 'ledger' THEN jsonb_build_object('batch_id', 'batch_' || (500000 + p.n),
                                                     'items', 20)
               ELSE jsonb_build_object('ref', p.idem_key, 'amount_minor', p.amount)
           END,
           CASE WHEN g.queue = 'webhooks'
                THEN '{"content-type": "application/json", "x-provider-signature": "v1"}'::jsonb
                ELSE '{}'::jsonb END,
           p.idem_key,
           CASE WHEN g.queue IN ('payments', 'notifications', 'webhooks')
                THEN 'pay_' || (500000 + p.n) END,
           CASE WHEN g.queue = 'webhooks' THEN 1 + p.n % 4 END,
           CASE WHEN g.queue = 'webhooks' THEN p.first_start - interval '2 seconds' END,
           'dead', p.attempts,
           CASE WHEN g.reason = 'exhausted' THEN p.attempts ELSE greatest(p.attempts, 8) END,
           p.dead_at - p.dur_last * interval '1 millisecond',
           p.first_start + interval '1 hour' + (p.dead_at - p.first_start) * 2,
           p.dead_at - p.dur_last * interval '1 millisecond',
           p.last_error, p.first_start - interval '50 milliseconds', p.dead_at
      FROM scale_plan p JOIN scale_group g ON g.gid = p.gid;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    PERFORM setval(pg_get_serial_sequence('redrive.job', 'id'), max(id)) FROM redrive.job;
    what := 'jobs'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    -- Dead letters ------------------------------------------------------------------------------
    INSERT INTO redrive.dead_letter (id, job_id, queue, kind, status, reason, error_class,
                                     error_code, last_error, stack_trace, attempts,
                                     idempotency_key, fingerprint, dead_at, version, claimed_by,
                                     claimed_at, resolution, resolution_note, resolved_by,
                                     resolved_at, updated_at)
    OVERRIDING SYSTEM VALUE
    SELECT p.n, v_job0 + p.n, g.queue, g.kind, p.status, g.reason, g.error_class, g.error_code,
           p.last_error,
           g.stack, p.attempts, p.idem_key, g.fingerprint, p.dead_at,
           CASE WHEN p.status = 'open' THEN 1 + (p.actor IS NOT NULL)::integer
                WHEN p.status IN ('resolved', 'requeued') THEN 2 ELSE 3 END,
           CASE WHEN p.status IN ('open', 'compensation_pending', 'compensating') THEN p.actor END,
           CASE WHEN p.status IN ('open', 'compensation_pending', 'compensating')
                THEN p.touched_at END,
           p.resolution,
           CASE p.resolution
               WHEN 'fixed_by_hand' THEN 'ledger corrected by hand'
               WHEN 'not_needed' THEN 'order cancelled by the customer'
               WHEN 'duplicate' THEN 'duplicate of an earlier job'
               WHEN 'compensated' THEN 'refunded'
           END,
           CASE WHEN p.status IN ('resolved', 'compensated') THEN p.actor END,
           CASE WHEN p.status IN ('resolved', 'compensated') THEN p.touched_at END,
           coalesce(p.touched_at, p.dead_at)
      FROM scale_plan p JOIN scale_group g ON g.gid = p.gid;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    PERFORM setval(pg_get_serial_sequence('redrive.dead_letter', 'id'), max(id))
       FROM redrive.dead_letter;
    what := 'dead letters'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    -- Attempts: attempt k starts off(k) = backoff units * base * jitter + (k - 1) * max duration
    -- ms after the first; the backoff before the next attempt is what is left of that gap, so
    -- gaps double (up to a cap) and the last attempt ends exactly at dead_at. Earlier attempts
    -- of a permanent failure timed out before sending; the others failed as the last one did.
    INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,
                                 error_class, error_code, message, stack_trace, worker_id,
                                 backoff_ms)
    SELECT v_job0 + a.n, a.k,
           a.first_start + a.off_k * interval '1 millisecond',
           a.first_start + (a.off_k + a.dur_k) * interval '1 millisecond',
           CASE WHEN a.k = a.attempts OR a.error_class <> 'permanent' THEN a.outcome
                ELSE 'failed' END,
           CASE WHEN a.k < a.attempts AND a.error_class = 'permanent' THEN 'transient'
                ELSE a.error_class END,
           CASE WHEN a.k < a.attempts AND a.error_class = 'permanent' THEN 'timeout_before_send'
                ELSE a.error_code END,
           CASE WHEN a.k < a.attempts AND a.error_class = 'permanent'
                THEN 'connect timeout after 5000 ms: request not sent'
                ELSE a.last_error END,
           CASE WHEN a.k = a.attempts THEN a.stack END,
           'worker-' || (1 + floor(random() * 8)::integer),
           CASE WHEN a.k < a.attempts THEN a.off_next - a.off_k - a.dur_k END
      FROM (SELECT p.n, k, p.attempts, p.first_start, p.last_error, g.outcome, g.error_class,
                   g.error_code, g.stack,
                   round(g.backoff_ms * p.jitter * sim.scale_backoff_units(k))::bigint
                       + (k - 1) * g.dur_ms AS off_k,
                   round(g.backoff_ms * p.jitter * sim.scale_backoff_units(k + 1))::bigint
                       + k * g.dur_ms AS off_next,
                   CASE WHEN k = p.attempts THEN p.dur_last
                        ELSE (g.dur_ms * (0.6 + 0.4 * random()))::integer END AS dur_k
              FROM scale_plan p
              JOIN scale_group g ON g.gid = p.gid
             CROSS JOIN LATERAL generate_series(1, p.attempts) AS k) a;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    what := 'attempts'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    -- Idempotency keys: a tenth belong to dead letters (failed, or stuck in processing after an
    -- ambiguous failure); the rest are keys of other requests, mostly done with a result.
    v_linked := least(p_dead_letters, p_keys / 10);
    INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id, locked_by,
                                         locked_until, result, error_message, conflicting_hash,
                                         conflict_count, last_conflict_at, created_at,
                                         updated_at, expires_at, version)
    SELECT k.scope, k.key,
           encode(sha256(convert_to('request:' || k.scope || ':' || k.key || ':' || p_seed,
                                    'UTF8')), 'hex'),
           k.state, k.job_id,
           CASE WHEN k.state = 'processing' THEN 'worker-' || (1 + floor(k.r_hold * 8)::integer) END,
           CASE WHEN k.state = 'processing' AND k.live
                THEN v_end + interval '10 minutes' + k.r_hold * interval '20 minutes'
                WHEN k.state = 'processing'
                THEN k.created_at + interval '30 seconds' + k.r_hold * interval '5 minutes' END,
           CASE WHEN k.state = 'done' THEN
               CASE k.scope
                   WHEN 'charge_card' THEN jsonb_build_object(
                       'charge_id', 'ch_' || substr(md5(k.key), 1, 20),
                       'provider_replayed', k.r_hold < 0.02)
                   WHEN 'send_receipt' THEN jsonb_build_object('sent_to',
                       'customer' || (k.r_hold * 100000)::integer || '@example.com')
                   WHEN 'process_webhook' THEN jsonb_build_object('event_id', k.key)
                   WHEN 'sync_ledger' THEN jsonb_build_object('batch_id', k.key, 'items', 20)
                   ELSE jsonb_build_object('ok', true)
               END END,
           CASE WHEN k.state = 'failed' THEN k.error END,
           CASE WHEN k.r_conflict < 0.007
                THEN encode(sha256(convert_to('other:' || k.key || ':' || p_seed, 'UTF8')),
                            'hex') END,
           CASE WHEN k.r_conflict < 0.007 THEN 1 + floor(k.r_conflict * 571)::integer ELSE 0 END,
           CASE WHEN k.r_conflict < 0.007
                THEN least(v_end, k.created_at + k.r_hold * interval '6 hours') END,
           k.created_at,
           CASE WHEN k.state = 'received' THEN k.created_at
                ELSE least(v_end, k.created_at + interval '200 milliseconds'
                                  + k.r_hold * interval '2 seconds') END,
           k.created_at + interval '7 days',
           CASE WHEN k.state = 'received' THEN 1 ELSE 2 END
               + CASE WHEN k.r_conflict < 0.007 THEN 1 + floor(k.r_conflict * 571)::integer
                      ELSE 0 END
      FROM (SELECT g.kind AS scope, p.idem_key AS key, v_job0 + p.n AS job_id,
                   CASE WHEN p.status IN ('resolved', 'compensated') AND p.jitter < 1.0
                        THEN 'done'
                        WHEN g.error_class = 'ambiguous' AND p.jitter < 1.05 THEN 'processing'
                        ELSE 'failed' END AS state,
                   false AS live, p.last_error AS error,
                   p.first_start AS created_at, random() AS r_hold, random() AS r_conflict
              FROM scale_plan p JOIN scale_group g ON g.gid = p.gid
             WHERE p.n <= v_linked
            UNION ALL
            SELECT f.scope, f.prefix || (500000 + p_dead_letters + f.i), NULL,
                   CASE WHEN f.r_state < 0.950 THEN 'done'
                        WHEN f.r_state < 0.970 THEN 'failed'
                        WHEN f.r_state < 0.990 THEN 'processing'
                        ELSE 'received' END,
                   f.r_state >= 0.985,
                   CASE f.scope
                       WHEN 'charge_card' THEN '402 card_declined: do_not_honor'
                       WHEN 'send_receipt' THEN '550 5.1.1 recipient address rejected'
                       ELSE 'downstream returned 422 Unprocessable Entity' END,
                   v_end - interval '14 days' * f.r_time, f.r_hold, f.r_conflict
              FROM (SELECT i,
                           (ARRAY['charge_card', 'send_receipt', 'process_webhook',
                                  'sync_ledger', 'deliver_webhook', 'update_crm'])[b] AS scope,
                           (ARRAY['charge:pay_', 'receipt:pay_', 'evt_pay_', 'sync:batch_',
                                  'delivery:dlv_', 'crm:acct_'])[b] AS prefix,
                           r_state, r_time, r_hold, r_conflict
                      FROM (SELECT i, width_bucket(random(), ARRAY[0, 0.55, 0.75, 0.90, 0.95,
                                                                   0.98]::float8[]) AS b,
                                   random() AS r_state, random() AS r_time, random() AS r_hold,
                                   random() AS r_conflict
                              FROM generate_series(1, p_keys - v_linked) AS i) d) f) k;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    what := 'idempotency keys'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    -- Reconciliation: a run every 2 hours for 30 days (a few fail); mismatches cluster in the
    -- runs that follow an incident, and their kinds are skewed toward status and amount.
    CREATE TEMP TABLE scale_run ON COMMIT DROP AS
    SELECT r, v_run0 + r AS id,
           v_start + (r - 1) * interval '2 hours' + random() * interval '10 minutes' AS at,
           random() < 0.02 AND r < 360 AS failed,
           random() AS r_dur, random() AS r_checked
      FROM generate_series(1, 360) AS r;
    INSERT INTO redrive.reconciliation_run (id, provider, started_at, finished_at, status,
                                            window_start, window_end, checked_count,
                                            mismatch_count, error_message)
    OVERRIDING SYSTEM VALUE
    SELECT id, CASE WHEN r % 4 = 0 THEN 'acquirer-eu' ELSE 'simulated-provider' END, at,
           at + interval '30 seconds' + r_dur * interval '5 minutes',
           CASE WHEN failed THEN 'failed' ELSE 'succeeded' END,
           at - interval '2 hours', at, CASE WHEN failed THEN 0 ELSE 8000 + floor(r_checked * 12000)::integer END,
           0, CASE WHEN failed THEN 'provider API returned 503 while listing charges' END
      FROM scale_run;
    PERFORM setval(pg_get_serial_sequence('redrive.reconciliation_run', 'id'), max(id))
       FROM redrive.reconciliation_run;

    INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, order_ref,
                                                 internal_amount_minor, external_amount_minor,
                                                 internal_currency, external_currency,
                                                 internal_status, external_status,
                                                 internal_record, external_record, status,
                                                 detected_at, version, resolution, resolved_by,
                                                 resolved_at)
    WITH weights AS (
        SELECT r.r, r.id, r.at, r.r_dur,
               CASE WHEN r.failed THEN 0
                    ELSE 1 + 12 * (SELECT count(*) FROM unnest(v_inc_at) AS s (at)
                                    WHERE r.at BETWEEN s.at AND s.at + interval '8 hours') END
                   AS w
          FROM scale_run r
    ), cfg AS MATERIALIZED (
        SELECT array_agg(c.cum ORDER BY c.r) AS run_cum
          FROM (SELECT r, coalesce(sum(w) OVER (ORDER BY r ROWS BETWEEN UNBOUNDED PRECEDING
                                                          AND 1 PRECEDING), 0)::double precision
                          / (sum(w) OVER ()) AS cum
                  FROM weights) c
    ), drawn AS (
        SELECT m, width_bucket(random(), c.run_cum) AS r,
               (ARRAY['status_mismatch', 'amount_mismatch', 'missing_internal',
                      'missing_external', 'duplicate_external', 'currency_mismatch'])[
                   width_bucket(random(), ARRAY[0, 0.40, 0.60, 0.75, 0.87, 0.95]::float8[])]
                   AS kind,
               500001 + floor(random() * (p_dead_letters + p_keys))::bigint AS pay,
               500 + floor(49500 * random() ^ 3)::bigint AS amount,
               random() AS r_cur, random() AS r_status, random() AS r_delta, random() AS r_when,
               random() AS r_actor
          FROM cfg c, generate_series(1, p_mismatches) AS m
    ), shaped AS (
        SELECT d.*, w.id AS run_id,
               w.at + interval '20 seconds' + d.r_when * w.r_dur * interval '5 minutes'
                   AS detected_at,
               CASE WHEN d.r_cur < 0.85 THEN 'USD' WHEN d.r_cur < 0.95 THEN 'EUR'
                    ELSE 'GBP' END AS cur,
               CASE WHEN d.r_delta < 0.5 THEN 'processing' WHEN d.r_delta < 0.8 THEN 'pending'
                    ELSE 'failed' END AS stale_status,
               CASE WHEN d.r_status < 0.65 THEN 'open' WHEN d.r_status < 0.95 THEN 'resolved'
                    WHEN d.r_status < 0.97 THEN 'compensation_pending'
                    ELSE 'compensated' END AS status
          FROM drawn d JOIN weights w ON w.r = d.r
    ), valued AS (
        SELECT s.*,
               CASE WHEN s.kind = 'missing_internal' THEN NULL ELSE s.amount END AS ia,
               CASE WHEN s.kind = 'missing_external' THEN NULL
                    WHEN s.kind = 'amount_mismatch'
                    THEN s.amount + CASE WHEN s.r_delta < 0.5
                                         THEN -(1 + floor(s.r_delta * 400)::bigint)
                                         ELSE 1 + floor(s.r_delta * 1000)::bigint END
                    ELSE s.amount END AS ea,
               CASE WHEN s.kind = 'missing_internal' THEN NULL ELSE s.cur END AS ic,
               CASE WHEN s.kind = 'missing_external' THEN NULL
                    WHEN s.kind = 'currency_mismatch'
                    THEN CASE s.cur WHEN 'USD' THEN 'EUR' ELSE 'USD' END
                    ELSE s.cur END AS ec,
               CASE WHEN s.kind = 'missing_internal' THEN NULL
                    WHEN s.kind = 'status_mismatch' THEN s.stale_status
                    ELSE 'succeeded' END AS ist,
               CASE WHEN s.kind = 'missing_external' THEN NULL
                    WHEN s.kind = 'status_mismatch' AND s.stale_status = 'failed'
                    THEN 'succeeded'
                    WHEN s.kind = 'status_mismatch' AND s.r_delta < 0.2 THEN 'refunded'
                    ELSE 'succeeded' END AS est
          FROM shaped s
    )
    SELECT v.run_id, v.kind, 'pay_' || v.pay, 'ord_' || (v.pay - 400000), v.ia, v.ea, v.ic, v.ec,
           v.ist, v.est,
           CASE WHEN v.ia IS NOT NULL THEN jsonb_build_object(
               'id', 'pay_' || v.pay, 'order_id', 'ord_' || (v.pay - 400000),
               'amount_minor', v.ia, 'currency', v.ic, 'status', v.ist,
               'provider_charge_id', CASE WHEN v.kind <> 'missing_internal'
                                          THEN 'ch_' || substr(md5('charge:' || v.pay), 1, 20)
                                     END) END,
           CASE WHEN v.ea IS NOT NULL THEN jsonb_build_object(
               'id', 'ch_' || substr(md5(CASE WHEN v.kind = 'duplicate_external'
                                              THEN 'again:' ELSE 'charge:' END || v.pay), 1, 20),
               'payment_ref', 'pay_' || v.pay, 'amount_minor', v.ea, 'currency', v.ec,
               'status', v.est) END,
           v.status, v.detected_at, CASE WHEN v.status = 'open' THEN 1 ELSE 2 END,
           CASE v.status WHEN 'resolved' THEN
               (ARRAY['matched_by_hand', 'provider_corrected', 'written_off'])[
                   1 + floor(v.r_when * 3)::integer]
               WHEN 'compensated' THEN 'refunded' END,
           CASE WHEN v.status IN ('resolved', 'compensated')
                THEN v_operators[1 + floor(12 * v.r_actor ^ 2)::integer] END,
           CASE WHEN v.status IN ('resolved', 'compensated')
                THEN least(v_end, v.detected_at + v.r_actor * interval '3 days') END
      FROM valued v;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    UPDATE redrive.reconciliation_run r
       SET mismatch_count = c.found
      FROM (SELECT run_id, count(*) AS found FROM redrive.reconciliation_mismatch
             GROUP BY run_id) c
     WHERE r.id = c.run_id;
    what := 'reconciliation mismatches'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    FOREACH v_statement IN ARRAY coalesce(v_index_create, '{}') LOOP
        EXECUTE v_statement;
    END LOOP;
    what := 'indexes rebuilt'; rows := coalesce(array_length(v_index_create, 1), 0);
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    -- Audit entries: ordinary inserts with every trigger on, so redrive.audit_log_chain gives
    -- each entry its id, time, user and place in the hash chain. Bulk requeues and resolves
    -- name up to 500 dead letters; the other actions one.
    PERFORM set_config('session_replication_role', 'origin', true);
    INSERT INTO redrive.audit_log (os_user, action, targets, reason, ticket, before, after,
                                   action_id, outcome)
    SELECT v_operators[1 + floor(12 * x.r_actor ^ 2)::integer], x.action,
           CASE WHEN x.size = 1 THEN jsonb_build_array(x.first_id)
                ELSE (SELECT jsonb_agg(x.first_id + j)
                        FROM generate_series(0, x.size - 1) AS j) END,
           CASE x.action
               WHEN 'requeue' THEN (ARRAY['provider incident over, retrying',
                                          'config fixed, requeue',
                                          'transient outage resolved',
                                          'retry after the rate-limit window'])[x.pick]
               WHEN 'resolve' THEN (ARRAY['duplicate of an earlier charge',
                                          'customer paid by other means',
                                          'fixed by hand in the ledger',
                                          'not needed any more: order cancelled'])[x.pick]
               WHEN 'compensate_request' THEN (ARRAY['customer was charged twice',
                                                     'refund for a failed delivery',
                                                     'charge went through after a timeout',
                                                     'goodwill refund agreed with support'])[x.pick]
               WHEN 'compensate_approve' THEN 'checked the provider dashboard: double charge confirmed'
               WHEN 'release_key' THEN (ARRAY['worker crashed mid-charge; provider shows no charge',
                                              'stale lease after a deploy',
                                              'worker OOM-killed; provider confirms nothing sent',
                                              'lease orphaned by a node failure'])[x.pick]
               WHEN 'claim' THEN 'looking into it'
               ELSE (ARRAY['asked provider support, waiting for an answer',
                           'customer contacted by support',
                           'same root cause as the morning incident',
                           'waiting for the fix to be deployed'])[x.pick]
           END,
           CASE WHEN x.r_ticket < 0.6 THEN 'OPS-' || (1000 + floor(x.r_ticket * 15000)::integer) END,
           CASE x.action
               WHEN 'requeue' THEN '{"status": "open"}'::jsonb
               WHEN 'resolve' THEN '{"status": "open"}'::jsonb
               WHEN 'compensate_request' THEN '{"status": "open"}'::jsonb
               WHEN 'compensate_approve' THEN '{"compensation": "pending_approval"}'::jsonb
               WHEN 'release_key' THEN '{"state": "processing"}'::jsonb
               WHEN 'claim' THEN '{"claimed_by": null}'::jsonb
           END,
           CASE x.action
               WHEN 'requeue' THEN jsonb_build_object('status', 'requeued', 'reset_attempts',
                                                      x.r_ticket < 0.5)
               WHEN 'resolve' THEN jsonb_build_object('status', 'resolved', 'resolution',
                                                      'fixed_by_hand')
               WHEN 'compensate_request' THEN jsonb_build_object(
                   'compensation', 'pending_approval', 'kind', 'refund', 'amount_minor',
                   500 + floor(x.r_ticket * 20000)::integer, 'currency', 'USD')
               WHEN 'compensate_approve' THEN '{"compensation": "approved"}'::jsonb
               WHEN 'release_key' THEN '{"state": "failed"}'::jsonb
               WHEN 'claim' THEN jsonb_build_object(
                   'claimed_by', v_operators[1 + floor(12 * x.r_actor ^ 2)::integer])
               ELSE jsonb_build_object('note', 'added')
           END,
           gen_random_uuid(),
           jsonb_build_object('applied', x.size - x.skipped, 'skipped', x.skipped)
      FROM (SELECT a.*,
                   1 + floor(random() * greatest(1, p_dead_letters - a.size))::bigint AS first_id,
                   CASE WHEN a.size > 1 AND random() < 0.2
                        THEN floor(random() * a.size / 10)::integer ELSE 0 END AS skipped
              FROM (SELECT i,
                           (ARRAY['claim', 'note', 'requeue', 'resolve', 'release_key',
                                  'compensate_request', 'compensate_approve'])[b] AS action,
                           CASE WHEN b NOT IN (3, 4) OR r_size < 0.85 THEN 1
                                WHEN r_size < 0.97 THEN 2 + floor(r_size2 * 19)::integer
                                ELSE least(p_dead_letters,
                                           21 + floor(480 * r_size2 ^ 2))::integer END AS size,
                           r_actor, r_ticket, pick
                      FROM (SELECT i, width_bucket(random(), ARRAY[0, 0.25, 0.40, 0.60, 0.85,
                                                                   0.92, 0.97]::float8[]) AS b,
                                   random() AS r_size, random() AS r_size2, random() AS r_actor,
                                   random() AS r_ticket, 1 + floor(random() * 4)::integer AS pick
                              FROM generate_series(1, p_audit_entries) AS i) d) a) x;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    what := 'audit entries'; rows := v_count;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;
    v_clock := clock_timestamp();

    ANALYZE redrive.job, redrive.attempt, redrive.dead_letter, redrive.failure_group,
            redrive.idempotency_key, redrive.reconciliation_run, redrive.reconciliation_mismatch,
            redrive.audit_log;
    what := 'analyze'; rows := NULL;
    seconds := round(extract(epoch FROM clock_timestamp() - v_clock)::numeric, 2);
    RETURN NEXT;

    what := 'total'; rows := NULL;
    seconds := round(extract(epoch FROM clock_timestamp() - v_began)::numeric, 2);
    RETURN NEXT;
END
$function$

;
