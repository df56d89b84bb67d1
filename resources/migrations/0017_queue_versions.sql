-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 17: what current queue libraries need of Redrive's shared
-- source tables (docs/architecture.md, "Source adapters").
--
-- 1. A queue can requeue a failed job by itself: pg-boss 12's redrive() moves a dead-letter copy
--    back as a new job while the failed job stays failed. The adapter records the new job on
--    Redrive's row of the failed one (library_requeued_as, library_requeued_at) and shows it as
--    requeued, so nobody requeues the same work a second time. A library can also clear the
--    key a failed job had (graphile-worker's add_job with the same key): the adapter keeps it
--    (job_key).
-- 2. Error classes (docs/architecture.md, "Error classes") come from a table of rules
--    (redrive.error_class_rule: a pattern on the error's code or message -> class, for every
--    source or one), shipped with a default set and changed only through the audited
--    redrive.change_error_class_rule (role redrive_admin). What the error carries (an explicit
--    class, its code or name, an HTTP or SMTP status) comes before its message text; a timeout
--    is ambiguous in every wording the libraries and common clients produce, because the side
--    effect may have happened; programming errors, validation errors and SMTP 5xx rejections
--    are permanent. Each class comes with why ("timeout wording"), shown in the case view.
ALTER TABLE redrive.source_job
    ADD COLUMN library_requeued_as text,
    ADD COLUMN library_requeued_at timestamptz,
    ADD COLUMN job_key text;
COMMENT ON COLUMN redrive.source_job.job_key IS
    'The job key (graphile-worker job_key) the job had when it failed, kept when the library '
    'clears it on the old row (a re-add with the same key)';
COMMENT ON COLUMN redrive.source_job.library_requeued_as IS
    'The queue''s own id of the job its library created to run this failed job again (pg-boss '
    'redrive()), when it did; the dead letter is then requeued, not open';

CREATE TABLE redrive.error_class_rule (
    id          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- NULL: every source; else one source's name (its rules are tried before the shared ones
    -- of the same priority).
    source      text    CHECK (source ~ '^[a-z][a-z0-9-]*$'),
    -- What the pattern is matched against: the error's code (its code, else HTTP status, else
    -- SMTPnnn for an SMTP responseCode, else its name), or its message.
    field       text    NOT NULL CHECK (field IN ('code', 'message')),
    -- A POSIX regular expression, matched case-insensitively.
    pattern     text    NOT NULL CHECK (pattern <> ''),
    error_class text    NOT NULL CHECK (error_class IN ('transient', 'permanent', 'ambiguous')),
    -- Why, in a few words, for the case view: "classed ambiguous because: timeout wording".
    because     text    NOT NULL CHECK (because <> ''),
    -- Lower first.
    priority    integer NOT NULL,
    updated_by  text    NOT NULL DEFAULT session_user,
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
COMMENT ON TABLE redrive.error_class_rule IS
    'How a failure a queue recorded is classed (docs/architecture.md, "Error classes"); changed '
    'only through redrive.change_error_class_rule (audited)';

INSERT INTO redrive.error_class_rule (source, field, pattern, error_class, because, priority)
VALUES
    (NULL, 'code', '^(ETIMEDOUT|ESOCKETTIMEDOUT|ECONNABORTED|TimeoutError|AbortError|408|504|57014)$',
     'ambiguous', 'timeout code', 10),
    (NULL, 'message', 'socket hang up', 'ambiguous',
     'connection dropped after the request was sent', 20),
    (NULL, 'code', '^(ECONNREFUSED|ECONNRESET|EAI_AGAIN|EPIPE|ENOTFOUND|40001|40P01|57P01|53300|429|502|503)$',
     'transient', 'transient error code', 30),
    (NULL, 'code', '^SMTP5[0-9]{2}$', 'permanent', 'SMTP 5xx rejection', 40),
    (NULL, 'code', '^SMTP4[0-9]{2}$', 'transient', 'SMTP 4xx temporary failure', 41),
    (NULL, 'code', '^4[0-9]{2}$', 'permanent', 'HTTP 4xx status', 42),
    (NULL, 'code', '^5[0-9]{2}$', 'transient', 'HTTP 5xx status', 43),
    (NULL, 'code', '^(TypeError|ReferenceError|SyntaxError|RangeError)$', 'permanent',
     'programming error', 50),
    (NULL, 'code', 'valid', 'permanent', 'validation error', 51),
    (NULL, 'message',
     '(timed? ?out|timeout|exceeded [0-9]+ ?(ms|s|sec|seconds?)\M|deadline|did not respond within|ETIMEDOUT)',
     'ambiguous', 'timeout wording', 60),
    (NULL, 'message', '(^|[^0-9])5[0-9]{2}[ -]5\.[0-9]{1,3}\.[0-9]{1,3}|^(smtp )?5[0-9]{2} ',
     'permanent', 'SMTP 5xx rejection', 70),
    (NULL, 'message', '^(TypeError|ReferenceError|SyntaxError): ', 'permanent',
     'programming error', 71),
    (NULL, 'message', '(invalid|validation|declined|not found|unauthori[sz]ed|forbidden)',
     'permanent', 'validation wording', 80);

-- The class of one failure and why: an explicit class the error carries wins ("the error says
-- so"); then the first matching rule (priority, a source's own rules before the shared ones);
-- else transient (it failed, and nothing says a retry cannot help). p_source NULL: shared rules
-- only. Runs as its owner (the rules are not granted to anyone).
CREATE FUNCTION redrive.classify_source_error_why(p_source text, p_message text, p_code text,
                                                  p_explicit text)
RETURNS TABLE (error_class text, because text)
LANGUAGE sql STABLE SECURITY DEFINER PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT c.error_class, c.because FROM (
        SELECT lower(p_explicit) AS error_class, 'the error says so' AS because, 0 AS o,
               0 AS priority
         WHERE lower(p_explicit) IN ('transient', 'permanent', 'ambiguous')
        UNION ALL
        SELECT r.error_class, r.because, 1, r.priority * 2 + CASE WHEN r.source IS NULL THEN 1 ELSE 0 END
          FROM redrive.error_class_rule r
         WHERE (r.source IS NULL OR r.source = p_source)
           AND CASE r.field WHEN 'code' THEN p_code ~* r.pattern
                            ELSE p_message ~* r.pattern END
        UNION ALL
        SELECT 'transient', 'no rule matched', 2, 0) c
    ORDER BY c.o, c.priority
    LIMIT 1
$$;

-- The class alone, with the shared rules (the adapters' views and capture triggers call it).
CREATE OR REPLACE FUNCTION redrive.classify_source_error(p_message text, p_code text,
                                                         p_explicit text)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT w.error_class FROM redrive.classify_source_error_why(NULL, p_message, p_code,
                                                                    p_explicit) w);

-- Add, change or delete one rule (role redrive_admin), audited like a setting. p_rule NULL adds
-- one; p_delete removes p_rule. The pattern must compile.
CREATE FUNCTION redrive.change_error_class_rule(p_action_id uuid, p_rule bigint, p_source text,
                                                p_field text, p_pattern text,
                                                p_error_class text, p_because text,
                                                p_priority integer, p_delete boolean,
                                                p_reason text, p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_before redrive.error_class_rule%ROWTYPE;
    v_after redrive.error_class_rule%ROWTYPE;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_admin']);
    PERFORM redrive.require_reason(p_reason);
    IF p_delete IS NULL OR (p_delete AND p_rule IS NULL) THEN
        RAISE EXCEPTION 'say which rule to delete, or p_delete false to add or change one'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT p_delete THEN
        BEGIN
            PERFORM '' ~* p_pattern;
        EXCEPTION WHEN invalid_regular_expression THEN
            RAISE EXCEPTION 'the pattern is not a valid regular expression: %', SQLERRM
                  USING ERRCODE = 'invalid_parameter_value';
        END;
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'change_error_class_rule', p_os_user, NULL,
        jsonb_build_object('rule', p_rule, 'source', p_source, 'field', p_field,
                           'pattern', p_pattern, 'error_class', p_error_class,
                           'because', p_because, 'priority', p_priority, 'delete', p_delete,
                           'reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    IF p_rule IS NOT NULL THEN
        SELECT * INTO v_before FROM redrive.error_class_rule WHERE id = p_rule FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'no error class rule %', p_rule USING ERRCODE = 'no_data_found';
        END IF;
    END IF;
    IF p_delete THEN
        DELETE FROM redrive.error_class_rule WHERE id = p_rule;
    ELSIF p_rule IS NULL THEN
        INSERT INTO redrive.error_class_rule (source, field, pattern, error_class, because,
                                              priority)
        VALUES (p_source, p_field, p_pattern, p_error_class, p_because, p_priority)
        RETURNING * INTO v_after;
    ELSE
        UPDATE redrive.error_class_rule
           SET source = p_source, field = p_field, pattern = p_pattern,
               error_class = p_error_class, because = p_because, priority = p_priority,
               updated_by = session_user, updated_at = clock_timestamp()
         WHERE id = p_rule
        RETURNING * INTO v_after;
    END IF;
    RETURN redrive.finish_action(
        p_action_id, 'change_error_class_rule',
        jsonb_build_array(jsonb_build_object('type', 'error_class_rule',
                                             'id', coalesce(v_after.id, p_rule),
                                             'result', 'applied')),
        p_reason, NULL, p_os_user,
        CASE WHEN p_rule IS NOT NULL THEN to_jsonb(v_before) END,
        CASE WHEN NOT p_delete THEN to_jsonb(v_after) END,
        jsonb_build_object('confirmed', 1, 'applied', 1, 'conflicts', 0, 'refused', 0));
END
$$;

-- Direct changes (the owner with psql) are audited too, as for settings.
CREATE FUNCTION redrive.error_class_rule_audit_direct_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM redrive.operator_action o
                    WHERE o.action = 'change_error_class_rule' AND o.outcome IS NULL
                      AND o.xmin = xid(pg_current_xact_id())) THEN
        INSERT INTO redrive.audit_log (action, targets, reason, before, after, action_id,
                                       outcome)
        VALUES ('error_class_rule_changed_directly',
                jsonb_build_array(jsonb_build_object('type', 'error_class_rule',
                                                     'id', coalesce(NEW.id, OLD.id),
                                                     'result', 'applied')),
                format('%s outside redrive.change_error_class_rule', lower(TG_OP)),
                CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN to_jsonb(OLD) END,
                CASE WHEN TG_OP IN ('UPDATE', 'INSERT') THEN to_jsonb(NEW) END,
                gen_random_uuid(), '{"confirmed": 1, "applied": 1}');
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER error_class_rule_audit_direct_change
    AFTER INSERT OR UPDATE OR DELETE ON redrive.error_class_rule
    FOR EACH ROW EXECUTE FUNCTION redrive.error_class_rule_audit_direct_change();

REVOKE ALL ON redrive.error_class_rule FROM PUBLIC;
GRANT SELECT ON redrive.error_class_rule
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_admin;
REVOKE ALL ON FUNCTION redrive.change_error_class_rule(uuid, bigint, text, text, text, text,
                                                       text, integer, boolean, text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.change_error_class_rule(uuid, bigint, text, text, text, text,
                                                          text, integer, boolean, text, text)
    TO redrive_admin;
REVOKE ALL ON FUNCTION redrive.classify_source_error_why(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.classify_source_error_why(text, text, text, text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_admin;
