-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 20: limits found by attacking migrations 11 and 17.
--
-- redrive.find_mentions (docs/domain.md#finding-a-customer): a term is at most 200 characters
-- (longer terms made one call run for tens of seconds), and audit entries are searched only for
-- a role that may also read the compensations (the worker role read every compensation's
-- payment, amount and reason through the audit entries that record them). The rest of the
-- function is migration 11's, unchanged.
--
-- redrive.error_class_rule (docs/architecture.md, "Error classes"): a pattern is at most 200
-- characters and has no back-references (\1..\9), the one construct of PostgreSQL's regular
-- expressions whose matching time can explode (a rule with four back-references took 12 s per
-- message, on every classification).

CREATE OR REPLACE FUNCTION redrive.find_mentions(p_term text, p_limit integer DEFAULT 100)
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
$$;

ALTER TABLE redrive.error_class_rule
    ADD CONSTRAINT error_class_rule_pattern_bounded
    CHECK (pg_catalog.length(pattern) <= 200 AND pattern !~ '\\[1-9]');
