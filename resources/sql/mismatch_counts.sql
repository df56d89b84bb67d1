-- Mismatches per kind: all, and still open (a rollup kept by the mismatches' own transactions,
-- migration 18).
SELECT m.kind, m.mismatches, m.open
  FROM mismatch_count_list m
 ORDER BY m.kind
