-- A page of dead letters, oldest first, after the keyset ($9 dead_at, $10 id); $11 rows.
SELECT {{dead_letter_columns}}
  FROM dead_letter_list d {{dead_letter_payment_join}}
 WHERE {{dead_letter_filter}}
   AND ($9::timestamptz IS NULL OR (d.dead_at, d.id) > ($9::timestamptz, $10::bigint))
 ORDER BY d.dead_at ASC, d.id ASC
 LIMIT $11
