-- Dead letters per time bucket by error class, for the stacked overview chart. $1 bucket width
-- in ms (a whole number of minutes; the console sizes it to about the plot's pixel width), $2..$3
-- the time range (whole buckets from the epoch). From the rollup (migration 18), as
-- overview_attempt_outcomes.sql.
SELECT date_bin($1::bigint * interval '1 millisecond', r.bucket, $2::timestamptz) AS bucket,
       nullif(r.key, '') AS error_class, sum(r.n)::bigint AS dead_letters
  FROM bucket_rollup_list r
 WHERE r.series = 'dead'
   AND r.grain_s = CASE WHEN $1::bigint % 3600000 = 0 THEN 3600 ELSE 60 END
   AND r.bucket >= $2::timestamptz AND r.bucket < $3::timestamptz
 GROUP BY 1, 2
 ORDER BY 1, 2
