-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 11: one search for what a customer gives support (an order
-- number, a payment reference, an e-mail address, a provider charge id), across dead letters,
-- mismatches, compensations and audit entries (docs/domain.md#finding-a-customer).
--
-- The search is literal and case-insensitive: every character of the term means itself, and a
-- term that begins or ends with a letter or digit is not found inside a longer word or number
-- (redrive.literal_mention_regex). It is served by pg_trgm GIN indexes (an ILIKE with every
-- LIKE wildcard escaped narrows, the regular expression decides): the ones migration 1 made on
-- the dead letter's message and idempotency key, and the expression indexes below. Each expression index is the
-- exact expression redrive.find_mentions() writes over the read-contract views, so the planner
-- uses it through the views. JSON columns are searched in their text form, with the term
-- written the way JSON text writes it (a quote as \", a backslash as \\), so every character of
-- the term still means itself. Terms need at least three characters (a trigram).
--
-- Nothing here is maintained by triggers: an index is kept by the same transaction that writes
-- the row, so a dead letter, a mismatch, a compensation or an audit entry is found the moment
-- it is committed.

-- What a dead letter's job says: the entity it is about (a payment) and its payload.
CREATE INDEX job_mention_trgm_idx ON redrive.job
    USING gin ((coalesce(entity_id, '') || E'\x1f' || coalesce(payload::text, ''))
               public.gin_trgm_ops);

-- A mismatch's payment, order, both provider charges and both records.
CREATE INDEX reconciliation_mismatch_mention_trgm_idx ON redrive.reconciliation_mismatch
    USING gin ((coalesce(payment_ref, '') || E'\x1f' || coalesce(order_ref, '') || E'\x1f'
                || coalesce(internal_charge_ref, '') || E'\x1f'
                || coalesce(external_charge_ref, '') || E'\x1f'
                || coalesce(internal_record::text, '') || E'\x1f'
                || coalesce(external_record::text, ''))
               public.gin_trgm_ops);

-- A compensation's payment, charge, provider reference, reason and ticket.
CREATE INDEX compensation_request_mention_trgm_idx ON redrive.compensation_request
    USING gin ((coalesce(payment_ref, '') || E'\x1f' || coalesce(charge_ref, '') || E'\x1f'
                || coalesce(provider_ref, '') || E'\x1f' || coalesce(reason, '') || E'\x1f'
                || coalesce(ticket, ''))
               public.gin_trgm_ops);

-- An audit entry's targets, before, after, outcome, reason and ticket. The entry itself is
-- unchanged (its hash covers it); only an index is added.
CREATE INDEX audit_log_mention_trgm_idx ON redrive.audit_log
    USING gin ((coalesce(targets::text, '') || E'\x1f' || coalesce(before::text, '') || E'\x1f'
                || coalesce(after::text, '') || E'\x1f' || coalesce(outcome::text, '')
                || E'\x1f' || coalesce(reason, '') || E'\x1f' || coalesce(ticket, ''))
               public.gin_trgm_ops);

-- The ILIKE pattern that matches `p_text` literally as a substring (ESCAPE '\').
CREATE FUNCTION redrive.literal_like_pattern(p_text text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN '%' || replace(replace(replace(p_text, '\', '\\'), '%', '\%'), '_', '\_') || '%';

-- The case-insensitive regular expression (for ~*) that finds `p_text` as a whole mention:
-- every character literal, and where the term begins (ends) with a letter or digit, the
-- character before (after) it is not one, so ord_1001 is not found inside ord_10011 and
-- ana@example.com not inside hana@example.com, while @example.com still finds every address
-- there. The LIKE pattern narrows through the index; this decides.
CREATE FUNCTION redrive.literal_mention_regex(p_text text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN p_text ~ '^[[:alnum:]]' THEN '(^|[^[:alnum:]])' ELSE '' END
       || regexp_replace(p_text, '([^[:alnum:]])', '\\\1', 'g')
       || CASE WHEN p_text ~ '[[:alnum:]]$' THEN '($|[^[:alnum:]])' ELSE '' END;

-- Every dead letter, mismatch, compensation and audit entry that mentions `p_term`.
--
-- Input: p_term, what the customer gave (blanks around it are ignored; at least 3 characters,
-- no control characters, else SQLSTATE 22023); p_limit, the rows returned per kind (1..1000).
-- Output: one row per hit, grouped by kind (dead_letter, mismatch, compensation,
-- audit_entry, in that order), newest first within a kind: its id, its time (timestamptz: dead_at,
-- detected_at, requested_at, at), its status, a one-line summary, the payment and order it is
-- about where known, an amount in minor units with its currency where known, a mismatch's
-- reconciliation run (run_id, NULL for the other kinds), and kind_total,
-- the number of hits of that kind counted up to 1,001 (1,001 means "more than 1,000"; the rows
-- are then the newest p_limit of the first 1,001 found: narrow the search).
--
-- Each kind's hits are found first (at most 1,001, through the indexes) and only then joined
-- to their rows one by one (LATERAL, with OFFSET 0 so that the planner keeps it so): it cannot
-- know how few they are, and a join planned from the other side walks the whole list in
-- time order (68 s instead of 0.6 s for a common word at 1,000,000 dead letters).
--
-- Roles: SECURITY INVOKER. Each kind is read through its read-contract view, and only when the
-- caller may SELECT from that view (has_table_privilege), so a role that cannot see a kind gets
-- no rows of it rather than an error, and the database, not the console, decides. The names are
-- not schema-qualified and the search_path is not pinned: dead letters are found in the source
-- the connection reads (docs/architecture.md#the-read-contract-and-the-action-functions).
CREATE FUNCTION redrive.find_mentions(p_term text, p_limit integer DEFAULT 100)
RETURNS TABLE (kind text, id bigint, at timestamptz, status text, summary text,
               payment_ref text, order_ref text, amount_minor bigint, currency text,
               run_id bigint, kind_total bigint)
LANGUAGE plpgsql STABLE
AS $$
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
               coalesce(m.internal_amount_cents, m.external_amount_cents),
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
               c.payment_ref, NULL::text, c.amount_cents, c.currency, NULL::bigint, total.n
          FROM hit
          CROSS JOIN LATERAL (SELECT * FROM compensation_list cc WHERE cc.id = hit.id OFFSET 0) c
          CROSS JOIN total
         ORDER BY c.requested_at DESC, c.id DESC
         LIMIT p_limit;
    END IF;

    IF pg_catalog.to_regclass('audit_entry_list') IS NOT NULL
       AND pg_catalog.has_table_privilege('audit_entry_list', 'SELECT') THEN
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
$$;
COMMENT ON FUNCTION redrive.find_mentions(text, integer) IS
    'Dead letters, mismatches, compensations and audit entries that mention a term, literally (docs/domain.md#finding-a-customer)';

REVOKE ALL ON FUNCTION redrive.literal_like_pattern(text), redrive.literal_mention_regex(text),
                       redrive.find_mentions(text, integer)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.literal_like_pattern(text), redrive.literal_mention_regex(text),
                          redrive.find_mentions(text, integer)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_worker,
       redrive_admin;
