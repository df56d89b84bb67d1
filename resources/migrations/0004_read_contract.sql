-- Redrive native schema, version 4: the read contract (DESIGN §4). The console reads only these
-- views and functions, by these names and columns; another job queue becomes a source by
-- implementing them in a schema of its own. The console finds them through its search_path,
-- which names the source's schema first.

-- One row per dead letter: what the triage table shows and filters on.
CREATE VIEW redrive.dead_letter_list AS
SELECT d.id, d.job_id::text AS job_ref, d.queue, d.kind, d.status, d.reason, d.error_class,
       d.error_code, d.last_error, d.attempts, d.idempotency_key, d.fingerprint, d.dead_at,
       d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note, d.resolved_by,
       d.resolved_at, d.updated_at, 'native'::text AS source
  FROM redrive.dead_letter d;

-- One dead letter in full: the job's payload, headers and ordering key, and the last error's
-- stack. payload_text is JSON text, or NULL with payload_bytes set for non-JSON payloads.
CREATE VIEW redrive.dead_letter_detail AS
SELECT d.id, d.job_id::text AS job_ref, d.queue, d.kind, d.status, d.reason, d.error_class,
       d.error_code, d.last_error, d.stack_trace, d.attempts, d.idempotency_key,
       d.fingerprint, d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution,
       d.resolution_note, d.resolved_by, d.resolved_at,
       j.payload::text AS payload_text, j.payload_bytes,
       octet_length(coalesce(j.payload::text, '')) + coalesce(octet_length(j.payload_bytes), 0)
           AS payload_size,
       j.headers, j.entity_id, j.event_seq, j.event_at, j.state AS job_state, j.attempt AS
           job_attempt, j.max_attempts, j.locked_by, j.locked_until, j.run_at, j.created_at AS
           job_created_at, j.deadline_at, 'native'::text AS source
  FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id;

-- Every attempt of a dead letter's job, oldest first (history is never rewritten).
CREATE VIEW redrive.attempt_history AS
SELECT d.id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       (extract(epoch FROM (a.finished_at - a.started_at)) * 1000)::bigint AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.attempt a JOIN redrive.dead_letter d ON d.job_id = a.job_id;

CREATE VIEW redrive.failure_group_list AS
SELECT g.fingerprint, g.kind, g.error_class, g.error_code, g.sample_message, g.first_seen
  FROM redrive.failure_group g;

CREATE VIEW redrive.idempotency_key_list AS
SELECT k.scope, k.key, k.request_hash, k.state, k.job_id::text AS job_ref, k.locked_by,
       k.locked_until, k.result::text AS result_text, k.error_message, k.conflicting_hash,
       k.conflict_count, k.last_conflict_at, k.created_at, k.updated_at, k.expires_at,
       k.version,
       (k.state = 'processing' AND k.locked_until < clock_timestamp()) AS stuck
  FROM redrive.idempotency_key k;

CREATE VIEW redrive.mismatch_list AS
SELECT m.id, m.run_id, m.kind, m.payment_ref, m.order_ref, m.internal_amount_cents,
       m.external_amount_cents, m.internal_currency, m.external_currency, m.internal_status,
       m.external_status, m.internal_record::text AS internal_record,
       m.external_record::text AS external_record, m.status, m.detected_at, m.version,
       m.resolution, m.resolved_by, m.resolved_at
  FROM redrive.reconciliation_mismatch m;

-- Outbox commands, for the case view's "what already happened to it".
CREATE VIEW redrive.outbox_list AS
SELECT o.id, o.command, o.target_type, o.target_id, o.payload::text AS payload_text, o.status,
       o.attempts, o.available_at, o.created_at, o.processed_at, o.last_error, o.action_id
  FROM redrive.outbox o;

-- Every attempt of every job (successes too), for the overview's outcomes over time.
CREATE VIEW redrive.attempt_timeline AS
SELECT a.started_at, a.outcome, a.error_class FROM redrive.attempt a;

-- Audit entries as the console lists them (the table itself stays append-only).
CREATE VIEW redrive.audit_entry_list AS
SELECT e.id, e.at, e.db_user, host(e.client_addr) AS client_addr, e.os_user, e.action,
       e.targets::text AS targets_text, e.targets, e.reason, e.ticket, e.before::text AS
       before_text, e.after::text AS after_text, e.action_id, e.outcome::text AS outcome_text,
       encode(e.prev_hash, 'hex') AS prev_hash, encode(e.hash, 'hex') AS hash
  FROM redrive.audit_log e;

-- Is it safe to retry this dead letter? One row per reason; severity 'block' (do not requeue
-- as is), 'warn' (look first) or 'ok'. Computed in SQL with the server's clock (DESIGN §3
-- rules 4 and 9; issue 4 "One place answers").
CREATE FUNCTION redrive.retry_verdict(p_dead_letter bigint)
RETURNS TABLE (severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (SELECT dl.*, j.entity_id, j.event_seq, j.event_at, j.state AS job_state,
                      j.locked_until, j.locked_by, j.kind AS job_kind
                 FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
                WHERE dl.id = p_dead_letter)
    SELECT 'block', 'job_leased',
           format('The job is still leased by %s until %s: it may be running right now.',
                  d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until > clock_timestamp()
    UNION ALL
    SELECT 'warn', 'lease_expired',
           format('The job''s lease (held by %s) expired at %s without a result; its last '
                  'attempt may have had an effect.', d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until <= clock_timestamp()
    UNION ALL
    SELECT 'warn', 'key_done',
           format('Idempotency key %s is already done: a retry would return the stored result '
                  'and do nothing.', k.key)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'done'
    UNION ALL
    SELECT 'warn', 'key_stuck',
           format('Idempotency key %s is stuck in processing since %s: the side effect may '
                  'have happened.', k.key, k.updated_at)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'processing'
    UNION ALL
    SELECT 'block', 'key_reused',
           'The idempotency key was used for a different request: retrying cannot succeed.'
      FROM d WHERE d.error_code = 'idempotency_key_reuse'
    UNION ALL
    SELECT 'warn', 'provider_has_charge',
           format('Reconciliation found a %s mismatch for %s: the provider may already have the '
                  'charge.', m.kind, m.payment_ref)
      FROM d JOIN redrive.reconciliation_mismatch m ON m.payment_ref = d.entity_id
     WHERE m.status <> 'resolved' AND m.kind IN ('missing_internal', 'duplicate_external')
    UNION ALL
    SELECT 'warn', 'newer_event_processed',
           format('A newer event for %s (sequence %s) succeeded after this one (sequence %s): '
                  'replaying this one could move the entity backwards.',
                  d.entity_id, max(n.event_seq), d.event_seq)
      FROM d JOIN redrive.job n ON n.entity_id = d.entity_id AND n.kind = d.job_kind
                              AND n.event_seq > d.event_seq AND n.state = 'succeeded'
     GROUP BY d.entity_id, d.event_seq
    UNION ALL
    SELECT 'warn', 'ambiguous',
           'The last failure was ambiguous: the side effect may have happened. Check the '
           'receiving side before requeueing.'
      FROM d WHERE d.error_class = 'ambiguous'
    UNION ALL
    SELECT 'block', 'permanent',
           format('The last failure was permanent (%s): retrying unchanged will fail again.',
                  d.error_code)
      FROM d WHERE d.error_class = 'permanent' AND d.error_code <> 'idempotency_key_reuse'
$$;

GRANT SELECT ON redrive.dead_letter_list, redrive.dead_letter_detail, redrive.attempt_history,
                redrive.failure_group_list, redrive.idempotency_key_list, redrive.mismatch_list,
                redrive.outbox_list, redrive.attempt_timeline, redrive.audit_entry_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_worker;
REVOKE ALL ON FUNCTION redrive.retry_verdict(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.retry_verdict(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
