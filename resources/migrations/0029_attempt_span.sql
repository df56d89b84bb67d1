-- A case view reads only the months its job's attempts fall in (docs/architecture.md,
-- "Partitions"). Attempts are partitioned by started_at, but the case view finds them by job, so
-- without a bound on started_at every month's partition is probed. A job's attempts_from and
-- attempts_until are the earliest and latest started_at of its attempts, kept by a statement
-- trigger on redrive.attempt (attempts are never deleted, and started_at is never changed);
-- redrive.attempt_history joins on them, and the plan prunes every other month at run time.
-- Neither the job's created_at nor its dead letter's times bound its attempts: a worker replaying
-- history records the times it is given.
ALTER TABLE redrive.job ADD COLUMN attempts_from timestamptz, ADD COLUMN attempts_until timestamptz;
COMMENT ON COLUMN redrive.job.attempts_from IS 'Earliest started_at of the job''s attempts (NULL: none yet); kept by redrive.attempt_span(), read by redrive.attempt_history to prune partitions';
COMMENT ON COLUMN redrive.job.attempts_until IS 'Latest started_at of the job''s attempts (NULL: none yet); kept by redrive.attempt_span()';

UPDATE redrive.job j
   SET attempts_from = s.lo, attempts_until = s.hi
  FROM (SELECT a.job_id, min(a.started_at) AS lo, max(a.started_at) AS hi
          FROM redrive.attempt a GROUP BY a.job_id) s
 WHERE j.id = s.job_id;

CREATE FUNCTION redrive.attempt_span() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- Only a job whose span grows is written: its first attempt, and each later one (the row is
    -- already locked by finish_attempt, which updates it in the same transaction).
    UPDATE redrive.job j
       SET attempts_from = least(j.attempts_from, n.lo),
           attempts_until = greatest(j.attempts_until, n.hi)
      FROM (SELECT r.job_id, min(r.started_at) AS lo, max(r.started_at) AS hi
              FROM new_rows r GROUP BY r.job_id) n
     WHERE j.id = n.job_id
       AND (j.attempts_from IS NULL OR j.attempts_from > n.lo OR j.attempts_until < n.hi);
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION redrive.attempt_span() FROM PUBLIC;
CREATE TRIGGER attempt_span_insert AFTER INSERT ON redrive.attempt
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.attempt_span();

-- Migration 4's view, with the job's span as the bound on started_at (same columns).
CREATE OR REPLACE VIEW redrive.attempt_history AS
SELECT d.id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       (extract(epoch FROM (a.finished_at - a.started_at)) * 1000)::bigint AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.dead_letter d
  JOIN redrive.job j ON j.id = d.job_id
  JOIN redrive.attempt a ON a.job_id = d.job_id
                        AND a.started_at >= j.attempts_from AND a.started_at <= j.attempts_until;

-- A bulk load with triggers off (session_replication_role = replica, as `redrive-worker scale`
-- does) leaves the spans unset, and the case view would show no attempt; the one rebuild such a
-- load already calls sets them too, and repairs the partitioned indexes that load re-created.
-- The recount itself stays whatever version it is.
ALTER FUNCTION redrive.rebuild_read_rollups() RENAME TO rebuild_read_rollup_counts;
CREATE FUNCTION redrive.rebuild_read_rollups() RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_index record;
BEGIN
    -- The same load drops secondary indexes and re-creates them from pg_get_indexdef(), which
    -- for a partitioned table says CREATE INDEX ... ON ONLY: an index on no partition, left
    -- invalid, and every read of attempts by job would scan whole months. Re-create such an
    -- index on the table and every partition.
    FOR v_index IN
        SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
          FROM pg_index i
          JOIN pg_class t ON t.oid = i.indrelid
          JOIN pg_namespace n ON n.oid = t.relnamespace
         WHERE n.nspname = 'redrive' AND t.relkind = 'p' AND NOT i.indisvalid
    LOOP
        EXECUTE format('DROP INDEX %s', v_index.name);
        EXECUTE replace(v_index.definition, ' ON ONLY ', ' ON ');
    END LOOP;
    PERFORM redrive.rebuild_read_rollup_counts();
    UPDATE redrive.job j
       SET attempts_from = s.lo, attempts_until = s.hi
      FROM (SELECT a.job_id, min(a.started_at) AS lo, max(a.started_at) AS hi
              FROM redrive.attempt a GROUP BY a.job_id) s
     WHERE j.id = s.job_id
       AND (j.attempts_from IS DISTINCT FROM s.lo OR j.attempts_until IS DISTINCT FROM s.hi);
END
$$;
COMMENT ON FUNCTION redrive.rebuild_read_rollups() IS
    'Recounts every read rollup (redrive.rebuild_read_rollup_counts) and sets each job''s attempt span (owner only)';
REVOKE ALL ON FUNCTION redrive.rebuild_read_rollups(), redrive.rebuild_read_rollup_counts()
    FROM PUBLIC;
