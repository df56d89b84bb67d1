-- SPDX-License-Identifier: GPL-3.0-or-later
-- The graphile-worker adapter, version 4.
-- 1. A job released with release_stuck_jobs (its worker died mid-attempt) that had no attempts
--    left is failed for good with no error of its own (graphile-worker's last_error is NULL or an
--    older attempt's). Its last attempt is the one Redrive recorded as abandoned: the work may
--    have happened, so it is ambiguous, code worker_lost, "worker lost during the attempt", and
--    the retry verdict says to check first (docs/architecture.md, "Error classes").
-- 2. Error classes through the rule table of migration 17, graphile-worker's own rules first
--    (graphile-worker keeps only the message of an error).
-- 3. graphile-worker 0.18.0 (migration 20) is verified too: it changed add_job/add_jobs only;
--    the tables and admin functions this adapter reads and calls are those of 0.17.
CREATE OR REPLACE VIEW redrive_graphile.dead_letter_state AS
SELECT d.*,
       CASE WHEN d.stuck THEN 'open'
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
