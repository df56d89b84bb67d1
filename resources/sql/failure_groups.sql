-- Failure groups among the dead letters matching filters $1..$8 (pass $8 NULL), largest first, at
-- most $9 (docs/domain.md#failure-groups). With a text filter ($7) the groups are counted over at
-- most $10 dead letters that match the whole filter, statuses included, the first found
-- (docs/benchmarks.md: recounting every match of a common word cost more than the page and its
-- count together); when more match, every row's sampled_matches says over how many ($10) the
-- counts were taken, else it is NULL. Per group:
--   dead_letters               how many match the whole filter, statuses ($1) included;
--   open_dead_letters, in_flight_dead_letters (requeued, not yet run again), resolved_dead_letters
--   (resolved or compensated), first_dead_at, last_dead_at: over the group's dead letters that
--   match the filter other than its statuses, so a requeued group still shows where its dead
--   letters went; a group is listed while something matches or something is in flight. With a
--   text filter they are counted over the same dead letters as dead_letters, and a column whose
--   statuses the status filter leaves out is NULL (not counted);
--   group_name                 error code (or class) and the normalized first line of its message;
--   look_alikes, differs       other listed groups with the same error code, and what tells
--                              this one apart from them (kind, class, message);
--   hourly                     dead letters per UTC hour over the last 24 hours, oldest first,
--                              comma-separated (the group's own, whatever the filter);
--   resolved_at, regressed_at  when the group last became resolved, and the dead_at since which
--                              it fails again after that (a regression); native source only.
-- The safe-to-retry verdicts are not here: failure_group_verdicts.sql counts them for the groups
-- listed, asked after this list (at 1,000,000 dead letters they cost minutes, the counts
-- milliseconds; docs/benchmarks.md).
-- The native source reads the rollup kept by migration 0014 when only statuses are filtered, with
-- each group's normalized message as stored with it (migration 0041); a source adapter
-- (search_path names its schema first) is counted from its own dead_letter_list.
WITH src AS MATERIALIZED (
    SELECT to_regclass('dead_letter_list') = 'redrive.dead_letter_list'::regclass AS native),
path AS MATERIALIZED (
    SELECT s.native AS native,
           s.native AND $2::text[] IS NULL AND $3::text[] IS NULL AND $4::text[] IS NULL
               AND $5::timestamptz IS NULL AND $6::timestamptz IS NULL AND $7::text IS NULL
               AND $8::text IS NULL AS rollup
      FROM src s),
-- The dead letters the filter selects, when the rollup cannot answer.
matching AS NOT MATERIALIZED (
    SELECT d.fingerprint, d.status, d.dead_at
      FROM dead_letter_list d
     WHERE NOT (SELECT p.rollup FROM path p)
       AND {{dead_letter_filter_but_status}}),
-- With a text filter, the first $10 + 1 dead letters that match the whole filter, statuses
-- included (none without): the one past $10 only tells that more match.
sample AS MATERIALIZED (
    SELECT m.* FROM matching m
     WHERE $7::text IS NOT NULL AND ($1::text[] IS NULL OR m.status = ANY ($1::text[]))
     LIMIT $10::bigint + 1),
counted AS NOT MATERIALIZED (
    SELECT m.* FROM matching m WHERE $7::text IS NULL
    UNION ALL
    (SELECT s.* FROM sample s LIMIT $10::bigint)),
c AS (
    SELECT r.fingerprint,
           CASE WHEN $1::text[] IS NULL THEN r.dead_letters
                ELSE CASE WHEN 'open' = ANY ($1::text[]) THEN r.open_count ELSE 0 END
                   + CASE WHEN 'requeued' = ANY ($1::text[]) THEN r.requeued_count ELSE 0 END
                   + CASE WHEN 'resolved' = ANY ($1::text[]) THEN r.resolved_count ELSE 0 END
                   + CASE WHEN 'compensation_pending' = ANY ($1::text[])
                          THEN r.compensation_pending_count ELSE 0 END
                   + CASE WHEN 'compensating' = ANY ($1::text[]) THEN r.compensating_count
                          ELSE 0 END
                   + CASE WHEN 'compensated' = ANY ($1::text[]) THEN r.compensated_count
                          ELSE 0 END END AS dead_letters,
           r.open_count AS open_dead_letters, r.requeued_count AS in_flight_dead_letters,
           r.resolved_count + r.compensated_count AS resolved_dead_letters,
           r.first_dead_at, r.last_dead_at, r.normalized_message AS stored_message,
           false AS sampled
      FROM failure_group_rollup_list r
     WHERE (SELECT p.rollup FROM path p)
    UNION ALL
    -- Behind OFFSET 0, the test whether to count at all stays above the count: when the rollup
    -- answers, the planner's parallel workers for it are never started (tens of ms under load).
    SELECT x.*, NULL::text, (SELECT count(*) > $10::bigint FROM sample)
      FROM (SELECT d.fingerprint,
                   count(*) FILTER (WHERE $1::text[] IS NULL OR d.status = ANY ($1::text[])),
                   CASE WHEN $7::text IS NULL OR $1::text[] IS NULL
                             OR 'open' = ANY ($1::text[])
                        THEN count(*) FILTER (WHERE d.status = 'open') END,
                   CASE WHEN $7::text IS NULL OR $1::text[] IS NULL
                             OR 'requeued' = ANY ($1::text[])
                        THEN count(*) FILTER (WHERE d.status = 'requeued') END,
                   CASE WHEN $7::text IS NULL OR $1::text[] IS NULL
                             OR $1::text[] && ARRAY['resolved', 'compensated']
                        THEN count(*) FILTER (WHERE d.status IN ('resolved', 'compensated')) END,
                   min(d.dead_at), max(d.dead_at)
              FROM counted d
             GROUP BY d.fingerprint
            OFFSET 0) x
     WHERE NOT (SELECT p.rollup FROM path p)),
top AS MATERIALIZED (
    SELECT c.*, g.kind, g.error_class, g.error_code,
           split_part(g.sample_message, E'\n', 1) AS sample_message,
           coalesce(c.stored_message,
                    normalize_error_message(split_part(g.sample_message, E'\n', 1)))
               AS normalized_message
      FROM (SELECT c.* FROM c
             WHERE c.dead_letters > 0 OR c.in_flight_dead_letters > 0
             ORDER BY c.dead_letters DESC, c.in_flight_dead_letters DESC, c.fingerprint
             LIMIT $9) c
      JOIN failure_group_list g ON g.fingerprint = c.fingerprint),
named AS (
    SELECT t.*,
           coalesce(t.error_code, t.error_class) || ': ' || t.normalized_message AS group_name,
           count(*) OVER w - 1 AS look_alikes,
           min(t.kind) OVER w <> max(t.kind) OVER w AS kinds_differ,
           min(t.error_class) OVER w <> max(t.error_class) OVER w AS classes_differ,
           min(t.normalized_message) OVER w <> max(t.normalized_message) OVER w AS messages_differ
      FROM top t
    WINDOW w AS (PARTITION BY coalesce(t.error_code, t.error_class))),
hours AS (
    SELECT generate_series(date_trunc('hour', now(), 'UTC') - interval '23 hours',
                           date_trunc('hour', now(), 'UTC'), interval '1 hour') AS hour),
hour_counts AS (
    SELECT h.fingerprint, h.hour, h.dead_letters
      FROM failure_group_hour_list h
     WHERE (SELECT p.native FROM path p)
       AND h.fingerprint IN (SELECT t.fingerprint FROM top t)
       AND h.hour >= date_trunc('hour', now(), 'UTC') - interval '23 hours'
    UNION ALL
    SELECT d.fingerprint, date_trunc('hour', d.dead_at, 'UTC'), count(*)
      FROM dead_letter_list d
     WHERE NOT (SELECT p.native FROM path p)
       AND d.fingerprint IN (SELECT t.fingerprint FROM top t)
       AND d.dead_at >= date_trunc('hour', now(), 'UTC') - interval '23 hours'
     GROUP BY 1, 2),
-- Each group's hours as two arrays, then its 24 counts looked up in them: no 500 x 24 grid to
-- join and sort (docs/benchmarks.md).
hour_arrays AS (
    SELECT hc.fingerprint, array_agg(hc.hour) AS hours, array_agg(hc.dead_letters) AS counts
      FROM hour_counts hc
     GROUP BY hc.fingerprint),
trend AS (
    SELECT a.fingerprint,
           (SELECT string_agg(coalesce(a.counts[array_position(a.hours, h.hour)], 0)::text, ','
                              ORDER BY h.hour)
              FROM hours h) AS hourly
      FROM hour_arrays a)
SELECT n.fingerprint, n.kind, n.error_class, n.error_code, n.sample_message, n.group_name,
       n.dead_letters, n.open_dead_letters, n.in_flight_dead_letters, n.resolved_dead_letters,
       CASE WHEN n.sampled THEN $10::bigint END AS sampled_matches,
       n.first_dead_at, n.last_dead_at, n.look_alikes,
       CASE WHEN n.look_alikes > 0
            THEN nullif(concat_ws(' · ',
                                  CASE WHEN n.kinds_differ THEN 'kind ' || n.kind END,
                                  CASE WHEN n.classes_differ THEN 'class ' || n.error_class END,
                                  CASE WHEN n.messages_differ
                                       THEN 'message "' || n.normalized_message || '"' END), '')
       END AS differs,
       coalesce(tr.hourly, repeat('0,', 23) || '0') AS hourly, rl.resolved_at, rl.regressed_at
  FROM named n
  LEFT JOIN trend tr ON tr.fingerprint = n.fingerprint
  LEFT JOIN failure_group_rollup_list rl
         ON (SELECT p.native FROM path p) AND rl.fingerprint = n.fingerprint
 ORDER BY n.dead_letters DESC, n.in_flight_dead_letters DESC, n.fingerprint
