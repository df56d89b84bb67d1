-- Dead letters per time bucket by error class, for the stacked overview chart. $1 bucket width
-- in ms (the console sizes it to about the plot's pixel width), $2..$3 the time range.
SELECT date_bin($1::bigint * interval '1 millisecond', d.dead_at, $2::timestamptz) AS bucket,
       d.error_class, count(*) AS dead_letters
  FROM dead_letter_list d
 WHERE d.dead_at >= $2::timestamptz AND d.dead_at < $3::timestamptz
 GROUP BY 1, 2
 ORDER BY 1, 2
