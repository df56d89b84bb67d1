-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" for pg-boss 12, version 4: a failure or a success is recorded on the
-- record of the job in its own queue only (docs/architecture.md, "Nothing disappears (pg-boss
-- 12)").
--
-- pg-boss keys a job by (name, id), and send() takes the id from the caller (its `id` option),
-- so two queues can each hold a job with the same id. Redrive's record is keyed by the id alone
-- (redrive.source_job, UNIQUE (source, job_ref)), and versions 1 to 3 wrote to it by the id
-- alone: a failure of job X in queue "newsletter" reopened the record of job X in queue
-- "payments" that an operator had resolved, replaced its captured payload (the one the case view
-- shows once pg-boss has deleted the job) with the newsletter job's data, and added its error to
-- the payments job's history; a success of the newsletter job after a retry marked the payments
-- job succeeded_after_requeue. Any login that may write pgboss.job could do that on purpose.
--
-- Now the record is written only when its queue is the job's: the capture triggers leave a
-- record of another queue alone and say so with a WARNING. The job of the second queue is then
-- not recorded (the record's key cannot hold both); pg-boss itself is never stopped.

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
     WHERE s.queue = NEW.name
    RETURNING s.id INTO v_id;
    IF v_id IS NULL THEN
        RAISE WARNING 'redrive: pg-boss job % failed in queue %, but Redrive records job % of '
                      'another queue; this failure is not recorded', NEW.id, NEW.name, NEW.id;
        RETURN NULL;
    END IF;
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

CREATE OR REPLACE FUNCTION redrive_pgboss.capture_success() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
BEGIN
    UPDATE redrive.source_job SET succeeded_at = v_now, version = version + 1, updated_at = v_now
     WHERE source = 'pgboss' AND job_ref = NEW.id::text AND queue = NEW.name
    RETURNING id INTO v_id;
    IF FOUND THEN
        INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                            outcome)
        VALUES (v_id, NEW.retry_count + 1, least(coalesce(NEW.started_on, v_now), v_now), v_now,
                'succeeded');
    END IF;
    RETURN NULL;
END
$$;

UPDATE redrive.source SET adapter_version = 4 WHERE name = 'pgboss';
