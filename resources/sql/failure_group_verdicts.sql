-- The safe-to-retry verdicts of failure groups (docs/domain.md#failure-groups), asked after
-- failure_groups.sql has listed them, so the list never waits for a verdict. $1..$8 the
-- groups statement's filter, bound the same way (DeadLetterFilter::appendParams; its statuses
-- $1 are not read: only open dead letters are judged; $8, a fingerprint, NULL); $9 the groups'
-- fingerprints (text[]); $10 the sample cap (int): per group at most the $10 newest open dead
-- letters matching the filter (dead_at, then id, descending) are judged. One row per group with
-- an open dead letter that matches:
--   verdict_sample             how many open dead letters were judged (at most $10);
--   verdict_sampled            true when the group has more than $10 of them, so the counts
--                              below are of the newest $10, not of all of them;
--   verdict_safe/_warn/_blocked how many of those the safe-to-retry verdict finds ok, to look
--                              at first, blocked;
--   verdict_reasons            which rules, as "code n" (blocking ones first), NULL when none.
-- The verdict of each dead letter is retry_verdicts() (migration 0014) on the native source,
-- the source adapter's own retry_verdict() otherwise (search_path names its schema first), the
-- same functions the action preview asks. The cap keeps the cost bounded at any size: without
-- it, the 50 largest groups of 1,000,000 dead letters take minutes (docs/benchmarks.md).
-- ($1 is named once below, typed, so that the statement prepares without parameter types.)
WITH src AS MATERIALIZED (
    SELECT to_regclass('dead_letter_list') = 'redrive.dead_letter_list'::regclass AS native,
           $1::text[] AS statuses_not_read),
-- One more than the cap per group, newest first, numbered in the order the index gives them
-- (dead_letter_fingerprint_idx on the native source: no sort): the extra one only tells that
-- the group was sampled.
picked AS MATERIALIZED (
    SELECT f.fingerprint, o.id, o.n
      FROM (SELECT DISTINCT unnest($9::text[]) AS fingerprint) f
     CROSS JOIN LATERAL (
           SELECT d.id, row_number() OVER (ORDER BY d.dead_at DESC, d.id DESC) AS n
             FROM dead_letter_list d
            WHERE d.fingerprint = f.fingerprint
              AND d.status = 'open'
              AND {{dead_letter_filter_but_status}}
            ORDER BY d.dead_at DESC, d.id DESC
            LIMIT $10::int + 1) o),
sampled AS (
    SELECT p.fingerprint, count(*) > $10::int AS sampled FROM picked p GROUP BY p.fingerprint),
targets AS MATERIALIZED (
    SELECT p.fingerprint, p.id FROM picked p WHERE p.n <= $10::int),
reasons AS MATERIALIZED (
    SELECT v.dead_letter_id AS id, v.severity, v.code
      FROM retry_verdicts((SELECT array_agg(t.id) FROM targets t)) v
     WHERE (SELECT s.native FROM src s)
    UNION ALL
    SELECT t.id, v.severity, v.code
      FROM targets t CROSS JOIN LATERAL retry_verdict(t.id) v
     WHERE NOT (SELECT s.native FROM src s)),
-- The worst severity of each dead letter with a reason; one without any is safe.
per_id AS (
    SELECT r.id, CASE WHEN bool_or(r.severity = 'block') THEN 'block'
                      WHEN bool_or(r.severity = 'warn') THEN 'warn' ELSE 'ok' END AS severity
      FROM reasons r
     GROUP BY r.id),
worst AS (
    SELECT t.id, t.fingerprint, coalesce(w.severity, 'ok') AS severity
      FROM targets t LEFT JOIN per_id w ON w.id = t.id),
codes AS (
    SELECT t.fingerprint, r.severity, r.code, count(DISTINCT r.id) AS n
      FROM reasons r JOIN targets t ON t.id = r.id
     WHERE r.severity IN ('block', 'warn')
     GROUP BY 1, 2, 3),
by_code AS (
    SELECT c.fingerprint,
           string_agg(c.code || ' ' || c.n, ', ' ORDER BY c.severity = 'warn', c.n DESC, c.code)
               AS reasons
      FROM codes c
     GROUP BY c.fingerprint)
SELECT w.fingerprint,
       count(*) AS verdict_sample,
       s.sampled AS verdict_sampled,
       count(*) FILTER (WHERE w.severity = 'ok') AS verdict_safe,
       count(*) FILTER (WHERE w.severity = 'warn') AS verdict_warn,
       count(*) FILTER (WHERE w.severity = 'block') AS verdict_blocked,
       b.reasons AS verdict_reasons
  FROM worst w
  JOIN sampled s ON s.fingerprint = w.fingerprint
  LEFT JOIN by_code b ON b.fingerprint = w.fingerprint
 GROUP BY w.fingerprint, s.sampled, b.reasons
 ORDER BY w.fingerprint
