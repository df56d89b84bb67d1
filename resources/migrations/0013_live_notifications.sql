-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 13: every list the console shows follows changes live
-- (docs/architecture.md#live-updates).
--
-- One NOTIFY per statement, never per row: a bulk insert of 10,000 dead letters or a requeue of
-- 1,000 is one notification, where the row triggers of version 1 sent one per row. Payloads stay
-- empty (docs/security.md: LISTEN needs no privilege, so a notification says only that something
-- changed; the console re-reads through the role-checked views). One channel per area, so a
-- change to the audit log does not make the console re-read the dead letters:
--
--   redrive_dead_letter     dead letters, failure groups, adapter jobs and their attempts
--   redrive_attempt         native attempts (the retry history, the overview's outcomes)
--   redrive_outbox          outbox commands (the case view's "Outbox & audit")
--   redrive_audit           operator actions and settings (each writes an audit entry)
--   redrive_compensation    compensation requests and their decisions
--   redrive_key             idempotency keys
--   redrive_reconciliation  reconciliation runs and mismatches

CREATE FUNCTION redrive.notify_changed() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- TG_ARGV[0] is the channel, fixed in the CREATE TRIGGER statements below.
    PERFORM pg_notify(TG_ARGV[0], '');
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION redrive.notify_changed() FROM PUBLIC;

-- The row triggers of version 1 go: the statement trigger below replaces them.
DROP TRIGGER dead_letter_inserted_notify ON redrive.dead_letter;
DROP TRIGGER dead_letter_status_notify ON redrive.dead_letter;
DROP FUNCTION redrive.dead_letter_notify();

CREATE TRIGGER dead_letter_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.dead_letter
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_dead_letter');
CREATE TRIGGER failure_group_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.failure_group
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_dead_letter');
CREATE TRIGGER source_job_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.source_job
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_dead_letter');
CREATE TRIGGER source_attempt_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.source_attempt
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_dead_letter');
CREATE TRIGGER attempt_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.attempt
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_attempt');
CREATE TRIGGER outbox_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.outbox
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_outbox');
-- The audit log itself keeps exactly its own triggers (the verifier refuses any other, see
-- docs/audit-chain.md), so audit entries are announced by what writes them in the same
-- transaction: every operator action begins and finishes in redrive.operator_action, a settings
-- or threshold change writes its table, and the worker's entries come with its outbox and
-- dead-letter changes (channels redrive_outbox and redrive_dead_letter, which the console's audit
-- log follows too).
CREATE TRIGGER operator_action_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.operator_action
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_audit');
CREATE TRIGGER settings_changed_notify
    AFTER INSERT OR UPDATE OR DELETE ON redrive.settings
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_audit');
CREATE TRIGGER approval_threshold_changed_notify
    AFTER INSERT OR UPDATE OR DELETE ON redrive.approval_threshold
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_audit');
CREATE TRIGGER compensation_request_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.compensation_request
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_compensation');
CREATE TRIGGER compensation_approval_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.compensation_approval
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_compensation');
CREATE TRIGGER idempotency_key_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.idempotency_key
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_key');
CREATE TRIGGER reconciliation_run_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.reconciliation_run
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_reconciliation');
CREATE TRIGGER reconciliation_mismatch_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.reconciliation_mismatch
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_reconciliation');
