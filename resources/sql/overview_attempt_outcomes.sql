-- Attempts per time bucket by outcome. $1 bucket width in ms (a whole number of minutes), $2..$3
-- the time range (whole buckets from the epoch). Read from the per-hour rollup when the width is
-- whole hours, else the per-minute one (migration 18): never the attempts themselves.
-- $4 the operator's time zone (an IANA name or 'UTC'): a width of whole hours counts wall-clock
-- hours of that zone from local midnight of 2000-01-03, so a day bucket is a local day (23 or 25
-- hours across a daylight-saving change); shorter widths count from $2 (docs/architecture.md
-- "Time buckets", models/time_buckets.h cuts the same edges). $5 true when the zone's offset is
-- whole hours over the range: only then can UTC hours be summed into its wall-clock buckets.
SELECT CASE WHEN $1::bigint % 3600000 = 0
            THEN date_bin($1::bigint * interval '1 millisecond', r.bucket AT TIME ZONE $4::text,
                          timestamp '2000-01-03 00:00') AT TIME ZONE $4::text
            ELSE date_bin($1::bigint * interval '1 millisecond', r.bucket, $2::timestamptz)
       END AS bucket,
       r.key AS outcome, sum(r.n)::bigint AS attempts
  FROM bucket_rollup_list r
 WHERE r.series = 'attempt'
   AND r.grain_s = CASE WHEN $1::bigint % 3600000 = 0 AND $5::boolean THEN 3600 ELSE 60 END
   AND r.bucket >= $2::timestamptz AND r.bucket < $3::timestamptz
 GROUP BY 1, 2
 ORDER BY 1, 2
