-- Every attempt of a dead letter's job, oldest first, with the backoff chosen after each.
SELECT a.id, a.attempt_no, a.started_at, a.finished_at, a.duration_ms, a.outcome, a.error_class,
       a.error_code, a.message, a.stack_trace, a.worker_id, a.backoff_ms
  FROM attempt_history a
 WHERE a.dead_letter_id = $1
 ORDER BY a.started_at, a.id
