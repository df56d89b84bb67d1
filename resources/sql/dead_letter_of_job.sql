-- The dead letter of job $1 (its reference as the source names it: dead_letter_list.job_ref), or
-- no row: the keys tab's "Open the case of this key's job". A job has one dead letter (a job that
-- dies again reopens it); the newest is taken should a source keep more. On the native source
-- the lookup is an index scan (dead_letter_job_ref_idx, migration 32).
SELECT d.id
  FROM dead_letter_list d
 WHERE d.job_ref = $1::text
 ORDER BY d.dead_at DESC, d.id DESC
 LIMIT 1
