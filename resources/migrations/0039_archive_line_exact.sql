-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 39: the line `redrive archive` writes for a dead letter
-- (migration 36) holds every time in one ISO 8601 form and the payload as received byte for byte
-- (docs/architecture.md "Retention").
--
-- 1. Times. jsonb prints a timestamptz as "2026-03-01T10:00:00+00:00", which stays; at the ends
--    of PostgreSQL's range (docs/domain.md "Times at the ends of the range") it printed
--    "4713-01-01T00:00:00+00:00 BC" and "294276-12-31T23:59:59+00:00", which no ISO 8601 reader
--    takes. A year outside 0000 to 9999 is now written in ISO 8601's expanded form with six
--    digits and a sign, astronomical numbering (1 BC is 0000, 4713 BC is -004712), as ECMAScript's
--    Date does: "-004712-01-01T00:00:00+00:00", "+294276-12-31T23:59:59+00:00". ISO 8601 has no
--    infinity: "infinity" and "-infinity" stay PostgreSQL's words.
-- 2. The payload as received (migration 16) is json, and to_jsonb() of the job turned it into
--    jsonb: duplicate keys merged, members reordered, spacing lost. It is now written as a JSON
--    string holding the text exactly as the producer sent it (null when there was none).

-- A time as jsonb prints it in UTC (p_time) in the archive's form above. IMMUTABLE: text only.
CREATE FUNCTION redrive.archive_time(p_time text) RETURNS text
LANGUAGE sql
IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE
               WHEN p_time IN ('infinity', '-infinity') THEN p_time
               WHEN y.year BETWEEN 0 AND 9999 THEN lpad(y.year::text, 4, '0') || y.rest
               ELSE CASE WHEN y.year < 0 THEN '-' ELSE '+' END
                    || lpad(abs(y.year)::text, 6, '0') || y.rest
           END
      FROM (SELECT CASE WHEN p_time LIKE '% BC' THEN 1 - split_part(p_time, '-', 1)::bigint
                        ELSE split_part(p_time, '-', 1)::bigint END AS year,
                   substr(p_time, strpos(p_time, '-'),
                          length(p_time) - strpos(p_time, '-') + 1
                              - CASE WHEN p_time LIKE '% BC' THEN 3 ELSE 0 END) AS rest) y
$$;
COMMENT ON FUNCTION redrive.archive_time(text) IS
    'A timestamptz as jsonb prints it in UTC, in the archive''s ISO 8601 form: years outside 0000..9999 expanded to a sign and six digits, astronomical numbering; infinity kept (docs/architecture.md "Retention")';

-- A row of p_table as to_jsonb() gives it (p_row), with each timestamptz column's value in the
-- archive's form. Members whose column is not a timestamptz are kept as they are.
CREATE FUNCTION redrive.archive_row(p_row jsonb, p_table regclass) RETURNS jsonb
LANGUAGE sql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_object_agg(e.key,
                            CASE WHEN a.atttypid = 'timestamptz'::regtype
                                      AND jsonb_typeof(e.value) = 'string'
                                 THEN to_jsonb(redrive.archive_time(e.value #>> '{}'))
                                 ELSE e.value END)
      FROM jsonb_each(p_row) e
      LEFT JOIN pg_attribute a
             ON a.attrelid = p_table AND a.attname = e.key AND a.attnum > 0
            AND NOT a.attisdropped
$$;

-- Migration 36's line, with times and the payload as received as above. The digest
-- archive_dead_letters() compares is over these lines, so the client and the server agree.
CREATE OR REPLACE FUNCTION redrive.archive_line(p_dead_letter bigint) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
RETURN (
    SELECT jsonb_build_object(
               'dead_letter', redrive.archive_row(to_jsonb(d), 'redrive.dead_letter'),
               'job', redrive.archive_row(to_jsonb(j), 'redrive.job')
                          || jsonb_build_object('payload_received', j.payload_received::text),
               'attempts', coalesce((SELECT jsonb_agg(redrive.archive_row(to_jsonb(a),
                                                                          'redrive.attempt')
                                                      ORDER BY a.started_at, a.id)
                                       FROM redrive.attempt a WHERE a.job_id = j.id), '[]'),
               'audit_ids', coalesce((SELECT jsonb_agg(e.id ORDER BY e.id)
                                        FROM redrive.audit_log e
                                       WHERE e.targets @> jsonb_build_array(jsonb_build_object(
                                                 'type', 'dead_letter', 'id', d.id))), '[]')
           )::text
      FROM redrive.dead_letter d
      JOIN redrive.job j ON j.id = d.job_id
     WHERE d.id = p_dead_letter);

REVOKE ALL ON FUNCTION redrive.archive_time(text), redrive.archive_row(jsonb, regclass)
    FROM PUBLIC;
