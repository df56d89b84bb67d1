-- "Is it safe to retry?" for one dead letter: one row per reason, worst first.
SELECT v.severity, v.code, v.explanation
  FROM retry_verdict($1) v
 ORDER BY CASE v.severity WHEN 'block' THEN 0 WHEN 'warn' THEN 1 ELSE 2 END, v.code
