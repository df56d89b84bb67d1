-- Attempts per time bucket by outcome. $1 bucket width in ms, $2..$3 the time range.
SELECT date_bin($1::bigint * interval '1 millisecond', a.started_at, $2::timestamptz) AS bucket,
       a.outcome, count(*) AS attempts
  FROM attempt_timeline a
 WHERE a.started_at >= $2::timestamptz AND a.started_at < $3::timestamptz
 GROUP BY 1, 2
 ORDER BY 1, 2
