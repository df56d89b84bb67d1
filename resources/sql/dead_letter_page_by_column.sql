-- A page of dead letters sorted by {{sort_column}} (ascending), newest first within a value,
-- after the keyset ($12 value, $9 dead_at, $10 id); $11 rows. Two index-driven branches: the
-- rest of the current value, then the values after it. {{sort_column}} is one of a fixed list
-- compiled into the console (status, queue, kind, error_class), never operator input.
SELECT * FROM (
    (SELECT {{dead_letter_columns}}
       FROM dead_letter_list d {{dead_letter_payment_join}}
      WHERE {{dead_letter_filter}}
        AND $9::timestamptz IS NOT NULL AND d.{{sort_column}} = $12::text
        AND (d.dead_at, d.id) < ($9::timestamptz, $10::bigint)
      ORDER BY d.dead_at DESC, d.id DESC
      LIMIT $11)
    UNION ALL
    (SELECT {{dead_letter_columns}}
       FROM dead_letter_list d {{dead_letter_payment_join}}
      WHERE {{dead_letter_filter}}
        AND ($12::text IS NULL OR d.{{sort_column}} > $12::text)
      ORDER BY d.{{sort_column}}, d.dead_at DESC, d.id DESC
      LIMIT $11)
) page
ORDER BY page.{{sort_column}}, page.dead_at DESC, page.id DESC
LIMIT $11
