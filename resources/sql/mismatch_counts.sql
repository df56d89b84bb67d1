-- Mismatches per kind: all, and still open.
SELECT m.kind, count(*) AS mismatches, count(*) FILTER (WHERE m.status = 'open') AS open
  FROM mismatch_list m
 GROUP BY m.kind
 ORDER BY m.kind
