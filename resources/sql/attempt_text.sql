-- What the attempt pane of the case view shows of the attempt with id $1 and start $2 (the
-- attempt table's key: the id alone may name an attempt of another job): its message and stack
-- trace, each cut to its first 1,000,000 characters, with the bytes left out of each (0 when
-- whole); Copy as JSON reads them whole (attempt_whole_text.sql, docs/architecture.md#long-values-in-lists).
-- Through the same role-checked view as the retry history; no row when the attempt is no longer
-- visible to the caller.
SELECT substr(a.message, 1, 1000000) AS message,
       redrive.cut_bytes(a.message, 1000000) AS message_cut_bytes,
       substr(a.stack_trace, 1, 1000000) AS stack_trace,
       redrive.cut_bytes(a.stack_trace, 1000000) AS stack_trace_cut_bytes
  FROM attempt_history a
 WHERE a.id = $1 AND a.started_at = $2::timestamptz
