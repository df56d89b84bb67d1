-- Failure groups among the dead letters matching filters $1..$8 (pass $8 NULL), largest first:
-- count, open count, first and last seen, a sample message. Computed in SQL, never in the client.
SELECT g.fingerprint, g.kind, g.error_class, g.error_code,
       split_part(g.sample_message, E'\n', 1) AS sample_message,
       c.dead_letters, c.open_dead_letters, c.first_dead_at, c.last_dead_at
  FROM (SELECT d.fingerprint, count(*) AS dead_letters,
               count(*) FILTER (WHERE d.status = 'open') AS open_dead_letters,
               min(d.dead_at) AS first_dead_at, max(d.dead_at) AS last_dead_at
          FROM dead_letter_list d
         WHERE {{dead_letter_filter}}
         GROUP BY d.fingerprint) c
  JOIN failure_group_list g ON g.fingerprint = c.fingerprint
 ORDER BY c.dead_letters DESC, g.fingerprint
 LIMIT $9
