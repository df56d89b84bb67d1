-- Per time bucket: dead letters that arrived, and dead letters resolved. $1 bucket width in ms,
-- $2..$3 the time range.
SELECT bucket, sum(arrived)::bigint AS arrived, sum(resolved)::bigint AS resolved FROM (
    SELECT date_bin($1::bigint * interval '1 millisecond', d.dead_at, $2::timestamptz) AS bucket,
           count(*) AS arrived, 0 AS resolved
      FROM dead_letter_list d
     WHERE d.dead_at >= $2::timestamptz AND d.dead_at < $3::timestamptz
     GROUP BY 1
    UNION ALL
    SELECT date_bin($1::bigint * interval '1 millisecond', d.resolved_at, $2::timestamptz),
           0, count(*)
      FROM dead_letter_list d
     WHERE d.resolved_at >= $2::timestamptz AND d.resolved_at < $3::timestamptz
     GROUP BY 1
) x
GROUP BY bucket
ORDER BY bucket
