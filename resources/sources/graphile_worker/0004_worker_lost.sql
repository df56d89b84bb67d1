-- SPDX-License-Identifier: GPL-3.0-or-later
-- The graphile-worker adapter, version 4.
-- 1. A job released with release_stuck_jobs (its worker died mid-attempt) that had no attempts
--    left is failed for good with no error of its own (graphile-worker's last_error is NULL or an
--    older attempt's). Its last attempt is the one Redrive recorded as abandoned: the work may
--    have happened, so it is ambiguous, code worker_lost, "worker lost during the attempt", and
--    the retry verdict says to check first (docs/architecture.md, "Error classes").
-- 2. Error classes through the rule table of migration 17, graphile-worker's own rules first
--    (graphile-worker keeps only the message of an error).
-- 3. Nothing disappears: graphile-worker deletes a job that succeeded, so a requeued job that
--    then succeeded left no case to open. Redrive's record now keeps it (job_state 'deleted',
--    status resolved, succeeded_after_requeue, the full history), and the job key Redrive saw
--    at a failure stays when a re-add clears it on the old row.
-- 4. graphile-worker 0.18.0 (migration 20) is verified too: it changed add_job/add_jobs only;
--    the tables and admin functions this adapter reads and calls are those of 0.17.
-- Redrive keeps the job key it saw at each failure: a re-add with the same key makes
-- graphile-worker clear the key on the old failed row (add_job) and insert a new job.
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
    SELECT t.identifier INTO v_kind FROM graphile_worker._private_tasks t WHERE t.id = NEW.task_id;
    SELECT q.queue_name INTO v_queue
      FROM graphile_worker._private_job_queues q WHERE q.id = NEW.job_queue_id;
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
            CASE WHEN NEW.attempts < NEW.max_attempts
                 THEN greatest(0, (extract(epoch FROM (NEW.run_at - v_now)) * 1000)::bigint) END);
    RETURN NULL;
END
$$;
-- Keys of failed jobs seen before this version.
UPDATE redrive.source_job s SET job_key = j.key
  FROM graphile_worker._private_jobs j
 WHERE s.source = 'graphile-worker' AND j.id = s.job_ref::bigint AND j.key IS NOT NULL
   AND s.job_key IS NULL;

CREATE OR REPLACE VIEW redrive_graphile.job_state AS
SELECT redrive_graphile.dead_letter_id(j.id) AS id, j.id::text AS job_ref,
       coalesce(q.queue_name, '(none)') AS queue, t.identifier AS kind,
       (j.locked_at IS NOT NULL AND j.locked_at < now() - cfg.stuck_after) AS stuck,
       (j.locked_at IS NULL AND j.attempts >= j.max_attempts) AS failed,
       CASE WHEN j.locked_at IS NOT NULL AND j.locked_at < now() - cfg.stuck_after THEN 'stuck'
            WHEN j.locked_at IS NOT NULL THEN 'locked'
            WHEN j.attempts >= j.max_attempts THEN 'failed'
            ELSE 'waiting' END AS job_state,
       j.locked_at + cfg.stuck_after AS stuck_at, j.attempts::integer AS attempts,
       j.max_attempts::integer AS max_attempts, j.last_error, coalesce(j.key, s.job_key) AS key, j.locked_at, j.locked_by,
       j.run_at, j.created_at, j.payload, j.priority, j.revision, j.flags, j.job_queue_id,
       j.id AS job_id, s.version AS row_version, s.last_failed_at, s.claimed_by, s.claimed_at,
       s.resolution, s.resolution_note, s.resolved_by, s.resolved_at, s.updated_at
  FROM graphile_worker._private_jobs j
  JOIN graphile_worker._private_tasks t ON t.id = j.task_id
  LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
  LEFT JOIN redrive.source_job s ON s.id = redrive_graphile.dead_letter_id(j.id)
  CROSS JOIN redrive_graphile.adapter_settings cfg
UNION ALL
-- Jobs graphile-worker no longer has (it deletes a job that succeeded, and a job can be removed
-- with remove_job or a reset): Redrive's record keeps the case openable, with its history.
SELECT s.id, s.job_ref, s.queue, s.kind, false AS stuck, false AS failed, 'deleted' AS job_state,
       j.locked_at AS stuck_at, coalesce(la.attempt_no, 0) AS attempts,
       coalesce(la.attempt_no, 0) AS max_attempts, la.message AS last_error,
       s.job_key AS key, j.locked_at, j.locked_by, j.run_at, j.created_at, j.payload, j.priority,
       j.revision, j.flags, j.job_queue_id, s.job_ref::bigint AS job_id, s.version AS row_version,
       s.last_failed_at, s.claimed_by, s.claimed_at,
       CASE WHEN s.succeeded_at IS NOT NULL THEN 'succeeded_after_requeue'
            ELSE s.resolution END AS resolution,
       s.resolution_note, s.resolved_by, coalesce(s.resolved_at, s.succeeded_at) AS resolved_at,
       s.updated_at
  FROM redrive.source_job s
  LEFT JOIN graphile_worker._private_jobs j ON false
  LEFT JOIN LATERAL (SELECT a.attempt_no, a.message FROM redrive.source_attempt a
                      WHERE a.source_job_id = s.id
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true
 WHERE s.source = 'graphile-worker'
   AND NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs g
                    WHERE g.id = s.job_ref::bigint);

CREATE OR REPLACE VIEW redrive_graphile.dead_letter_state AS
SELECT d.*,
       CASE WHEN d.stuck THEN 'open'
            WHEN d.job_state = 'deleted' THEN 'resolved'
            WHEN NOT d.failed THEN 'requeued'
            WHEN d.resolved_at IS NOT NULL THEN 'resolved' ELSE 'open' END AS status,
       CASE WHEN d.stuck THEN 'stuck'
            WHEN d.last_error = 'Manually marked as failed' THEN 'permanent'
            ELSE 'exhausted' END AS reason,
       CASE WHEN d.stuck OR (d.failed AND la.outcome = 'abandoned') THEN 'ambiguous'
            ELSE (SELECT w.error_class
                    FROM redrive.classify_source_error_why('graphile-worker', d.last_error, NULL,
                                                           NULL) w) END AS error_class,
       CASE WHEN d.stuck OR (d.failed AND la.outcome = 'abandoned') THEN 'worker_lost' END
           AS error_code,
       CASE WHEN d.stuck
            THEN format('locked by worker %s since %s without a result: the worker is presumed '
                        'dead (graphile-worker keeps the lock for 4 hours)', d.locked_by,
                        d.locked_at)
            WHEN d.failed AND la.outcome = 'abandoned'
            THEN 'worker lost during the attempt: ' || coalesce(la.message, 'no result recorded')
            ELSE d.last_error END AS message,
       CASE WHEN d.stuck THEN d.stuck_at
            ELSE coalesce(d.last_failed_at,
                          d.run_at - exp(least(d.attempts, 10)) * interval '1 second') END
           AS dead_at,
       coalesce(d.row_version, 1) AS version
  FROM redrive_graphile.job_state d
  LEFT JOIN LATERAL (SELECT a.outcome, a.message FROM redrive.source_attempt a
                      WHERE a.source_job_id = d.id AND d.failed
                      ORDER BY a.attempt_no DESC, a.id DESC LIMIT 1) la ON true;

UPDATE redrive.source SET adapter_version = 4 WHERE name = 'graphile-worker';
