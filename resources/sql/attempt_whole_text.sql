-- The whole message and stack trace of the attempts named by $1 (ids) and $2 (their starts, as
-- the page sent them), pairwise, for a copy of retry-history rows whose page sent them cut short
-- (attempt_history_page.sql, docs/architecture.md#long-values-in-lists), through the same
-- role-checked view as the page. An attempt is its id with its start, the attempt table's key:
-- the id alone may name attempts of other jobs. One no longer visible to the caller is left out.
SELECT a.id, a.started_at AS at, a.message, a.stack_trace
  FROM attempt_history a
  JOIN unnest($1::text[]::bigint[], $2::text[]::timestamptz[]) k (id, at)
    ON a.id = k.id AND a.started_at = k.at
