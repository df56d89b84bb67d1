-- Attempts per time bucket by outcome. $1 bucket width in ms (a whole number of minutes), $2..$3
-- the time range (whole buckets from the epoch). Read from the per-hour rollup when the width is
-- whole hours, else the per-minute one (migration 18): never the attempts themselves.
SELECT date_bin($1::bigint * interval '1 millisecond', r.bucket, $2::timestamptz) AS bucket,
       r.key AS outcome, sum(r.n)::bigint AS attempts
  FROM bucket_rollup_list r
 WHERE r.series = 'attempt'
   AND r.grain_s = CASE WHEN $1::bigint % 3600000 = 0 THEN 3600 ELSE 60 END
   AND r.bucket >= $2::timestamptz AND r.bucket < $3::timestamptz
 GROUP BY 1, 2
 ORDER BY 1, 2
