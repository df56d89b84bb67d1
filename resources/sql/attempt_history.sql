-- Every attempt of a dead letter's job, oldest first, with the backoff chosen after each (the
-- case view's timeline, the approval dialog's table). Message and stack trace are cut to their
-- first 2,000 characters, with the bytes left out of each (docs/architecture.md#long-values-in-
-- lists): 500 attempts of 400,000 characters each were 200 MB read for a tooltip's first line.
SELECT a.id, a.attempt_no, a.started_at, a.finished_at, a.duration_ms, a.outcome, a.error_class,
       a.error_code, substr(a.message, 1, 2000) AS message,
       redrive.cut_bytes(a.message, 2000) AS message_cut_bytes,
       substr(a.stack_trace, 1, 2000) AS stack_trace,
       redrive.cut_bytes(a.stack_trace, 2000) AS stack_trace_cut_bytes,
       a.worker_id, a.backoff_ms
  FROM attempt_history a
 WHERE a.dead_letter_id = $1
 ORDER BY a.started_at, a.id
