-- The whole message and stack trace of attempts $1 (ids), for a copy of retry-history rows
-- whose page sent them cut short (attempt_history_page.sql,
-- docs/architecture.md#long-values-in-lists), through the same role-checked view as the page.
-- An id no longer visible to the caller is left out.
SELECT a.id, a.message, a.stack_trace
  FROM attempt_history a
 WHERE a.id = ANY ($1::bigint[])
