-- SPDX-License-Identifier: GPL-3.0-or-later
-- The adapter, version 9: times at the ends of timestamptz's range (Redrive's migration 34,
-- docs/domain.md "Times at the ends of the range"). The queue may hold 'infinity', '-infinity' or
-- a year near 294276 in a job's times; no read of the console fails on one:
-- - the retry history's duration is NULL when either end is infinite, and computed from each
--   end's epoch, so that a span of centuries neither fails nor overflows;
-- - the overview's buckets count an instant only when it is finite and before 294000 (date_bin()
--   from the epoch overflows in the last years of the range). Same columns as before.

CREATE OR REPLACE VIEW redrive_graphile.attempt_history AS
SELECT a.source_job_id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       CASE WHEN isfinite(a.started_at) AND isfinite(a.finished_at)
            THEN round((extract(epoch FROM a.finished_at) - extract(epoch FROM a.started_at))
                       * 1000)::bigint END AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'graphile-worker';

-- Overview time buckets (the adapter's version of migration 18's rollup), with the same rule.
CREATE OR REPLACE VIEW redrive_graphile.bucket_rollup_list AS
SELECT x.series, g.grain_s,
       date_bin(g.grain_s * interval '1 second', x.at, timestamptz '1970-01-01 00:00:00+00')
           AS bucket,
       x.key, count(*) AS n
  FROM (SELECT 'attempt'::text AS series, a.started_at AS at, a.outcome AS key
          FROM redrive_graphile.attempt_timeline a
        UNION ALL
        SELECT 'dead', d.dead_at, coalesce(d.error_class, '') FROM redrive_graphile.dead_letter_list d
        UNION ALL
        SELECT 'resolved', d.resolved_at, '' FROM redrive_graphile.dead_letter_list d
         WHERE d.resolved_at IS NOT NULL) x
 CROSS JOIN (VALUES (60), (3600)) g (grain_s)
 WHERE isfinite(x.at) AND x.at < timestamptz '294000-01-01 00:00:00+00'
 GROUP BY 1, 2, 3, 4;

UPDATE redrive.source SET adapter_version = 9 WHERE name = 'graphile-worker';
