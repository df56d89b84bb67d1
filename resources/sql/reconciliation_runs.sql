-- The latest reconciliation runs, newest first; $1 rows.
SELECT r.id, r.provider, r.started_at, r.finished_at, r.status, r.checked_count,
       r.mismatch_count, r.error_message
  FROM redrive.reconciliation_run r
 ORDER BY r.started_at DESC, r.id DESC
 LIMIT $1
