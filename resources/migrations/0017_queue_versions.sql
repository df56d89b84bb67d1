-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 17: what current queue libraries need of Redrive's shared
-- source tables (docs/architecture.md, "Source adapters").
--
-- 1. A queue can requeue a failed job by itself: pg-boss 12's redrive() moves a dead-letter copy
--    back as a new job while the failed job stays failed. The adapter records the new job on
--    Redrive's row of the failed one (library_requeued_as, library_requeued_at) and shows it as
--    requeued, so nobody requeues the same work a second time.
-- 2. Error classes (docs/architecture.md, "Error classes"): what the error carries (an explicit
--    class, its code or name, an HTTP or SMTP status) comes before its message text; a timeout
--    is ambiguous in every wording the libraries and common clients produce, because the side
--    effect may have happened; programming errors, validation errors and SMTP 5xx rejections
--    are permanent.
ALTER TABLE redrive.source_job
    ADD COLUMN library_requeued_as text,
    ADD COLUMN library_requeued_at timestamptz;
COMMENT ON COLUMN redrive.source_job.library_requeued_as IS
    'The queue''s own id of the job its library created to run this failed job again (pg-boss '
    'redrive()), when it did; the dead letter is then requeued, not open';

-- p_code is the error's code, else its status (HTTP status, or SMTPnnn for an SMTP
-- responseCode), else its name (adapters pass what the library kept); p_message its
-- message; p_explicit a class the application attached. Result: transient, permanent or
-- ambiguous. The order of the rules is the precedence.
CREATE OR REPLACE FUNCTION redrive.classify_source_error(p_message text, p_code text,
                                                         p_explicit text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN lower(p_explicit) IN ('transient', 'permanent', 'ambiguous') THEN lower(p_explicit)
    -- A timeout the error says by its code: the request may have been carried out.
    WHEN upper(p_code) IN ('ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED', 'TIMEOUTERROR',
                           'ABORTERROR', '408', '504', '57014') THEN 'ambiguous'
    -- The connection dropped after the request went out: the reply is what was lost.
    WHEN p_message ~* 'socket hang up' THEN 'ambiguous'
    WHEN upper(p_code) IN ('ECONNREFUSED', 'ECONNRESET', 'EAI_AGAIN', 'EPIPE', 'ENOTFOUND',
                           '40001', '40P01', '57P01', '53300', '429', '502', '503')
        THEN 'transient'
    -- Status codes the error carries: an SMTP reply (adapters pass responseCode as SMTPnnn) 5xx
    -- is a permanent rejection, 4xx a temporary one; an HTTP 4xx other than 408 and 429 will
    -- not change on a retry.
    WHEN p_code ~ '^SMTP5[0-9]{2}$' THEN 'permanent'
    WHEN p_code ~ '^SMTP4[0-9]{2}$' THEN 'transient'
    WHEN p_code ~ '^4[0-9]{2}$' THEN 'permanent'
    WHEN p_code ~ '^5[0-9]{2}$' THEN 'transient'
    -- Programming errors fail the same way every time; so do errors named for validation.
    WHEN p_code IN ('TypeError', 'ReferenceError', 'SyntaxError', 'RangeError')
        OR p_code ~* 'valid' THEN 'permanent'
    -- Timeout wordings: pg-boss ("job timed out", "job heartbeat timeout", "handler execution
    -- exceeded 5s", "job failed by timeout in active state"), graphile-worker task timeouts and
    -- HTTP clients ("did not respond within 1500ms", "ETIMEDOUT", "deadline exceeded").
    WHEN p_message ~* '(timed? ?out|timeout|exceeded [0-9]+ ?(ms|s|sec|seconds?)\M|deadline|did not respond within|ETIMEDOUT)'
        THEN 'ambiguous'
    -- SMTP permanent rejections: a 5xx reply ("550 5.1.1 mailbox unavailable").
    WHEN p_message ~ '(^|[^0-9])5[0-9]{2}[ -]5\.[0-9]{1,3}\.[0-9]{1,3}'
        OR p_message ~* '^(smtp )?5[0-9]{2} ' THEN 'permanent'
    WHEN p_message ~* '^(TypeError|ReferenceError|SyntaxError): ' THEN 'permanent'
    WHEN p_message ~* '(invalid|validation|declined|not found|unauthori[sz]ed|forbidden)'
        THEN 'permanent'
    ELSE 'transient' END;
