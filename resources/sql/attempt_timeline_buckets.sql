-- Dead letter $1's attempts in $2 equal time buckets from the first start to the last, counted
-- per outcome and error class: what the retry timeline draws when there are more attempts than
-- pixels. Each row: the bucket (1..$2), its start and end, an outcome with its error class, and
-- how many attempts of that kind started in it; empty buckets have no row.
WITH a AS (SELECT a.started_at, a.outcome, a.error_class
             FROM attempt_history a
            WHERE a.dead_letter_id = $1),
     s AS (SELECT min(a.started_at) AS lo, max(a.started_at) AS hi FROM a),
     w AS (SELECT s.lo, greatest(extract(epoch FROM s.hi - s.lo), 0.001) / $2::integer AS width
             FROM s)
SELECT least(floor(extract(epoch FROM a.started_at - w.lo) / w.width)::integer + 1,
             $2::integer) AS bucket,
       count(*) AS attempts, a.outcome, a.error_class,
       w.lo + make_interval(secs => (least(floor(extract(epoch FROM a.started_at - w.lo)
                                                 / w.width)::integer, $2::integer - 1))
                                    * w.width) AS bucket_from,
       w.lo + make_interval(secs => (least(floor(extract(epoch FROM a.started_at - w.lo)
                                                 / w.width)::integer, $2::integer - 1) + 1)
                                    * w.width) AS bucket_until
  FROM a CROSS JOIN w
 GROUP BY 1, 3, 4, 5, 6
 ORDER BY 1, 3, 4
