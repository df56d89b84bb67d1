-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" for pg-boss 12, version 3.
--
-- The payload outlives pg-boss's row (docs/architecture.md, "Nothing disappears (pg-boss 12)"):
-- pg-boss deletes a failed job deletion_seconds after completed_on, data and all. The capture
-- trigger now copies the job's data into Redrive's record (redrive.source_job.payload, Redrive
-- migration 22) at every failure, and where the job came from a dead-letter queue or a redrive
-- its source_name, source_id and source_root_id (redrive.source_job.origin); the case view shows
-- pg-boss's own data while the row is there and the captured one after it is deleted, with the
-- origin in its headers. Jobs that failed before this version get both from their row now.
--
-- A redrive() into another queue is linked back: redrive(name, {destination}) creates the new
-- job in the destination queue, which version 1 did not look at (it searched the new job's own
-- queue), so the failed job stayed open and a Redrive requeue would have run the work twice.
-- The failed job a redriven copy came from is found by lineage only: the chain's (source_root_id)
-- most recently failed job that is not itself a dead-letter copy (source_id NULL) and that no
-- redrive has been linked to yet, in whichever queue it failed.
--
-- The list's state_note column (read contract, Redrive migration 22) is NULL: a failed pg-boss
-- 12 job has nothing to add to its status.

CREATE OR REPLACE FUNCTION redrive_pgboss.capture_failure() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
    v_message text := redrive_pgboss.error_message(NEW.output);
    v_origin jsonb := nullif(jsonb_strip_nulls(jsonb_build_object(
        'source_queue', NEW.source_name, 'source_id', NEW.source_id,
        'source_root_id', NEW.source_root_id)), '{}'::jsonb);
BEGIN
    INSERT INTO redrive.source_job AS s (source, job_ref, queue, kind, failures, first_failed_at,
                                         last_failed_at, payload, origin)
    VALUES ('pgboss', NEW.id::text, NEW.name, NEW.name, 1, v_now, v_now, NEW.data, v_origin)
    ON CONFLICT (source, job_ref) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now, payload = NEW.data, origin = v_origin
    RETURNING s.id INTO v_id;
    INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                        outcome, error_class, error_code, message, stack_trace,
                                        worker_id, backoff_ms)
    VALUES (v_id, NEW.retry_count + CASE WHEN NEW.started_on IS NULL THEN 0 ELSE 1 END,
            least(coalesce(NEW.started_on, v_now), v_now), v_now, 'failed',
            redrive_pgboss.error_class(NEW.output), redrive_pgboss.error_code(NEW.output),
            v_message, NEW.output ->> 'stack', NULL,
            CASE WHEN NEW.state = 'retry'
                 THEN greatest(0, (extract(epoch FROM (NEW.start_after - now())) * 1000)::bigint)
            END);
    RETURN NULL;
END
$$;

-- A job pg-boss's redrive() creates (source_id NULL, source_root_id the chain's first job), in
-- the dead letter's source queue or in the destination it was given.
CREATE OR REPLACE FUNCTION redrive_pgboss.capture_library_redrive() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
BEGIN
    UPDATE redrive.source_job s
       SET library_requeued_as = NEW.id::text, library_requeued_at = v_now,
           version = s.version + 1, updated_at = v_now
     WHERE s.id = (SELECT s2.id FROM redrive.source_job s2
                     JOIN pgboss.job j ON j.id = s2.job_ref::uuid AND j.name = s2.queue
                    WHERE s2.source = 'pgboss' AND s2.library_requeued_as IS NULL
                      AND j.state = 'failed' AND j.source_id IS NULL AND j.id <> NEW.id
                      AND (j.id = NEW.source_root_id OR j.source_root_id = NEW.source_root_id)
                    ORDER BY s2.last_failed_at DESC NULLS LAST, s2.id DESC LIMIT 1);
    RETURN NULL;
END
$$;

-- Jobs that failed before this version: their payload and origin from pg-boss's row.
UPDATE redrive.source_job s
   SET payload = j.data,
       origin = nullif(jsonb_strip_nulls(jsonb_build_object(
           'source_queue', j.source_name, 'source_id', j.source_id,
           'source_root_id', j.source_root_id)), '{}'::jsonb)
  FROM pgboss.job j
 WHERE s.source = 'pgboss' AND s.payload IS NULL
   AND j.id = s.job_ref::uuid AND j.name = s.queue AND j.state = 'failed';

-- Failed jobs whose dead-letter copy pg-boss's redrive() moved into another queue before this
-- version: the redriven job names the chain's first job as source_root_id.
UPDATE redrive.source_job s
   SET library_requeued_as = r.id::text, library_requeued_at = r.created_on
  FROM pgboss.job r
 WHERE s.source = 'pgboss' AND s.library_requeued_as IS NULL
   AND r.source_root_id = s.job_ref::uuid AND r.source_id IS NULL;

-- What pg-boss 12 says of each job Redrive has a record of. A job pg-boss has deleted (its
-- deletion_seconds after completed_on passed) keeps Redrive's record: job_state 'deleted', the
-- last captured failure in place of pg-boss's output, status resolved unless it succeeded.
-- A failed job whose dead-letter copy pg-boss's redrive() moved back is requeued, not open.
CREATE OR REPLACE VIEW redrive_pgboss.job_state AS
SELECT s.id, s.job_ref, s.queue, s.kind,
       CASE WHEN j.id IS NULL THEN 'resolved'
            WHEN j.state = 'failed' AND s.resolved_at IS NOT NULL THEN 'resolved'
            WHEN j.state = 'failed' AND s.library_requeued_as IS NOT NULL THEN 'requeued'
            WHEN j.state = 'failed' THEN 'open'
            WHEN j.state = 'completed' THEN 'resolved'
            ELSE 'requeued' END AS status,
       CASE WHEN coalesce(redrive_pgboss.error_message(j.output), la.message)
                 IN ('job timed out', 'job heartbeat timeout',
                     'job failed by timeout in active state')
                 OR coalesce(redrive_pgboss.error_message(j.output), la.message)
                    ~ '^handler execution exceeded [0-9]+s$'
            THEN 'deadline'
            WHEN j.id IS NULL OR j.retry_count >= j.retry_limit THEN 'exhausted'
            ELSE 'permanent' END AS reason,
       CASE WHEN j.id IS NULL THEN la.error_class ELSE redrive_pgboss.error_class(j.output) END
           AS error_class,
       CASE WHEN j.id IS NULL THEN la.error_code ELSE redrive_pgboss.error_code(j.output) END
           AS error_code,
       CASE WHEN j.id IS NULL THEN la.message ELSE redrive_pgboss.error_message(j.output) END
           AS last_error,
       CASE WHEN j.id IS NULL THEN la.stack_trace ELSE j.output ->> 'stack' END AS stack_trace,
       CASE WHEN j.id IS NULL THEN coalesce(la.attempt_no, 0)
            ELSE j.retry_count + CASE WHEN j.started_on IS NULL THEN 0 ELSE 1 END END
           AS attempts,
       j.singleton_key AS idempotency_key,
       coalesce(j.completed_on, s.last_failed_at, j.created_on) AS dead_at,
       s.version, s.claimed_by, s.claimed_at,
       CASE WHEN j.state = 'completed' OR (j.id IS NULL AND s.succeeded_at IS NOT NULL)
            THEN 'succeeded_after_requeue'
            ELSE s.resolution END AS resolution,
       s.resolution_note, s.resolved_by,
       CASE WHEN j.state = 'completed' THEN j.completed_on
            WHEN j.id IS NULL THEN coalesce(s.resolved_at, s.succeeded_at)
            ELSE s.resolved_at END AS resolved_at,
       s.updated_at, coalesce(j.state::text, 'deleted') AS job_state,
       j.completed_on + j.deletion_seconds * interval '1 second' AS deleted_at,
       s.library_requeued_as, j, s.payload AS captured_payload, s.origin AS captured_origin
  FROM redrive.source_job s
  LEFT JOIN pgboss.job j ON j.id = s.job_ref::uuid AND j.name = s.queue
  LEFT JOIN LATERAL (SELECT a.message, a.error_class, a.error_code, a.stack_trace, a.attempt_no
                       FROM redrive.source_attempt a
                      WHERE a.source_job_id = s.id AND j.id IS NULL
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true
 WHERE s.source = 'pgboss';

CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, d.updated_at, 'pgboss'::text AS source,
       NULL::text AS state_note
  FROM redrive_pgboss.job_state d
 WHERE d.job_state = 'failed';

-- The case view also finds a dead letter that was requeued (status requeued) or has since
-- succeeded (resolved, succeeded_after_requeue), for as long as pg-boss keeps the job.
CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_detail AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.stack_trace, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at,
       coalesce((d.j).data, d.captured_payload)::text AS payload_text, NULL::bytea AS payload_bytes,
       octet_length(coalesce((d.j).data, d.captured_payload)::text) AS payload_size,
       jsonb_build_object('queue_policy', (d.j).policy, 'priority', (d.j).priority,
                          'retry_limit', (d.j).retry_limit, 'retry_delay', (d.j).retry_delay,
                          'retry_backoff', (d.j).retry_backoff,
                          'expire_seconds', (d.j).expire_seconds,
                          'deletion_seconds', (d.j).deletion_seconds,
                          'deleted_by_pgboss_at', d.deleted_at,
                          'library_requeued_as', d.library_requeued_as,
                          'keep_until', (d.j).keep_until,
                          'singleton_key', (d.j).singleton_key,
                          'dead_letter_queue', (d.j).dead_letter, 'output', (d.j).output,
                          'origin', d.captured_origin,
                          'payload_from', CASE WHEN d.job_state = 'deleted' AND d.captured_payload IS NOT NULL
                                               THEN 'redrive_record' END)
           AS headers,
       NULL::text AS entity_id, NULL::bigint AS event_seq, NULL::timestamptz AS event_at,
       d.job_state, d.attempts AS job_attempt, (d.j).retry_limit + 1 AS max_attempts,
       NULL::text AS locked_by,
       CASE WHEN d.job_state = 'active'
            THEN (d.j).started_on + (d.j).expire_seconds * interval '1 second' END
           AS locked_until,
       (d.j).start_after AS run_at, (d.j).created_on AS job_created_at,
       NULL::timestamptz AS deadline_at, 'pgboss'::text AS source
  FROM redrive_pgboss.job_state d;

UPDATE redrive.source SET adapter_version = 3 WHERE name = 'pgboss';
