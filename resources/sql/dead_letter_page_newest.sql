-- A page of dead letters, newest first, after the keyset ($9 dead_at, $10 id) of the last row
-- already shown; $11 rows. Filters $1..$8: see fragments/dead_letter_filter.sql. Served by the
-- (..., dead_at DESC, id DESC) indexes; never OFFSET (docs/architecture.md#reading-a-page).
SELECT {{dead_letter_columns}}
  FROM dead_letter_list d {{dead_letter_payment_join}}
 WHERE {{dead_letter_filter}}
   AND ($9::timestamptz IS NULL OR (d.dead_at, d.id) < ($9::timestamptz, $10::bigint))
 ORDER BY d.dead_at DESC, d.id DESC
 LIMIT $11
