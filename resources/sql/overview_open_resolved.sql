-- Per time bucket: dead letters that arrived, and dead letters resolved. $1 bucket width in ms (a
-- whole number of minutes), $2..$3 the time range (whole buckets from the epoch). From the rollup
-- (migration 18), as overview_attempt_outcomes.sql.
SELECT date_bin($1::bigint * interval '1 millisecond', r.bucket, $2::timestamptz) AS bucket,
       coalesce(sum(r.n) FILTER (WHERE r.series = 'dead'), 0)::bigint AS arrived,
       coalesce(sum(r.n) FILTER (WHERE r.series = 'resolved'), 0)::bigint AS resolved
  FROM bucket_rollup_list r
 WHERE r.series IN ('dead', 'resolved')
   AND r.grain_s = CASE WHEN $1::bigint % 3600000 = 0 THEN 3600 ELSE 60 END
   AND r.bucket >= $2::timestamptz AND r.bucket < $3::timestamptz
 GROUP BY 1
 ORDER BY 1
