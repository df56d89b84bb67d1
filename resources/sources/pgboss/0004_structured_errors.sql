-- SPDX-License-Identifier: GPL-3.0-or-later
-- The pg-boss 10 adapter, version 4: error classes from the structured fields a serialized error
-- carries before its text (migration 17, docs/architecture.md "Error classes"): an explicit
-- errorClass, then retryable = false (permanent), then code, HTTP status, SMTP responseCode,
-- name. pg-boss keeps the handler's Error as serialize-error wrote it, own fields included.

CREATE FUNCTION redrive_pgboss.classify_error(e jsonb, p_message text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT w.error_class FROM redrive.classify_source_error_why(
    'pgboss', p_message,
    coalesce(e ->> 'code', e ->> 'status', e ->> 'statusCode',
             'SMTP' || (e ->> 'responseCode'), nullif(e ->> 'name', 'Error')),
    coalesce(e ->> 'errorClass',
             CASE WHEN jsonb_typeof(e -> 'retryable') = 'boolean' AND NOT (e -> 'retryable')::boolean
                  THEN 'permanent' END)) w);
REVOKE ALL ON FUNCTION redrive_pgboss.classify_error(jsonb, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.classify_error(jsonb, text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

CREATE OR REPLACE FUNCTION redrive_pgboss.error_class(o jsonb) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN redrive_pgboss.classify_error(coalesce(o -> 'value', o), redrive_pgboss.error_message(o));

UPDATE redrive.source SET adapter_version = 4 WHERE name = 'pgboss';
