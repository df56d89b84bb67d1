-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "graphile-worker", version 11: the capture trigger survives a job unlocked with
-- run_at 'infinity' (docs/domain.md, "Times at the ends of the range").
--
-- capture_failure() computed the backoff of a failed attempt as run_at - now(). PostgreSQL 15
-- cannot subtract an infinite timestamp ("cannot subtract infinite timestamps"), so an update of
-- graphile_worker._private_jobs that unlocks a job with run_at = 'infinity' failed inside
-- Redrive's trigger: Redrive broke the queue it watches. The backoff is now NULL for such a
-- retry (it has no finite delay). The rest of the function is version 7's, its SET search_path
-- and qualified names unchanged (docs/security.md, "The queue's own role").

CREATE OR REPLACE FUNCTION redrive_graphile.capture_failure() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
    v_queue text;
    v_kind text;
BEGIN
    -- force_unlock_workers and the 4-hour stale-lock reset unlock too, without a failure.
    IF NOT (NEW.run_at > greatest(now(), OLD.run_at)) THEN
        RETURN NULL;
    END IF;
    SELECT t.identifier INTO v_kind FROM redrive_graphile.queue_tasks() t WHERE t.id = NEW.task_id;
    SELECT q.queue_name INTO v_queue
      FROM redrive_graphile.queue_job_queues() q WHERE q.id = NEW.job_queue_id;
    INSERT INTO redrive.source_job AS s (id, source, job_ref, queue, kind, failures,
                                         first_failed_at, last_failed_at, job_key)
    VALUES (redrive_graphile.dead_letter_id(NEW.id), 'graphile-worker', NEW.id::text,
            coalesce(v_queue, '(none)'), coalesce(v_kind, '?'), 1, v_now, v_now, NEW.key)
    ON CONFLICT (id) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now, job_key = coalesce(NEW.key, s.job_key)
    RETURNING s.id INTO v_id;
    INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                        outcome, error_class, error_code, message, stack_trace,
                                        worker_id, backoff_ms)
    VALUES (v_id, NEW.attempts, least(OLD.locked_at, v_now), v_now, 'failed',
            (SELECT w.error_class
               FROM redrive.classify_source_error_why('graphile-worker', NEW.last_error, NULL,
                                                      NULL) w),
            NULL, NEW.last_error, NULL, OLD.locked_by,
            -- A retry due at infinity has no finite backoff (-infinity never passes the check
            -- above).
            CASE WHEN NEW.attempts < NEW.max_attempts AND isfinite(NEW.run_at)
                 THEN greatest(0, (extract(epoch FROM (NEW.run_at - v_now)) * 1000)::bigint) END);
    RETURN NULL;
END
$$;

UPDATE redrive.source SET adapter_version = 11 WHERE name = 'graphile-worker';
