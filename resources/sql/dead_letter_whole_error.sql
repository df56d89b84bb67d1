-- The whole last error of dead letters $1 (ids, as text), for a copy of list rows whose page
-- sent it cut short (fragments/dead_letter_columns.sql, docs/architecture.md#long-values-in-
-- lists), through the same role-checked read contract as the list. An id no longer visible to
-- the caller is left out.
SELECT d.id, d.last_error
  FROM dead_letter_list d
 WHERE d.id = ANY ($1::text[]::bigint[])
