-- Dead letter $1's attempts in $2 equal time buckets from the first start to the last, counted
-- per outcome and error class: what the retry timeline draws when there are more attempts than
-- pixels. Each row: the bucket (1..$2), its start and end, an outcome with its error class, and
-- how many attempts of that kind started in it; empty buckets have no row. An attempt that
-- started at 'infinity' or '-infinity' is on no time axis and in no bucket (the retry history
-- lists it); widths are in seconds from each start's epoch (numeric), so a span of centuries
-- neither overflows nor fails (docs/domain.md "Times at the ends of the range").
WITH a AS (SELECT a.started_at, extract(epoch FROM a.started_at) AS t, a.outcome, a.error_class
             FROM attempt_history a
            WHERE a.dead_letter_id = $1 AND isfinite(a.started_at)),
     s AS (SELECT min(a.t) AS lo, max(a.t) AS hi, min(a.started_at) AS lo_at,
                  max(a.started_at) AS hi_at
             FROM a),
     w AS (SELECT s.lo, s.lo_at, s.hi_at, greatest(s.hi - s.lo, 0.001) / $2::integer AS width
             FROM s),
     b AS (SELECT least(floor((a.t - w.lo) / w.width)::integer + 1, $2::integer) AS bucket,
                  a.outcome, a.error_class, w.lo, w.lo_at, w.hi_at, w.width
             FROM a CROSS JOIN w)
SELECT b.bucket, count(*) AS attempts, b.outcome, b.error_class,
       CASE WHEN b.bucket = 1 THEN b.lo_at
            ELSE least(to_timestamp((b.lo + (b.bucket - 1) * b.width)::double precision),
                       b.hi_at) END AS bucket_from,
       CASE WHEN b.bucket = $2::integer THEN b.hi_at
            ELSE least(to_timestamp((b.lo + b.bucket * b.width)::double precision), b.hi_at)
       END AS bucket_until
  FROM b
 GROUP BY b.bucket, b.outcome, b.error_class, 5, 6
 ORDER BY 1, 3, 4
