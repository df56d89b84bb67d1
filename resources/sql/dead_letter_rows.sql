-- A page of the dead-letter list by a frozen pass (docs/architecture.md#paging-a-frozen-pass):
-- the dead letters $1 (ids, a slice of dead_letter_keys.sql's list) as the list shows them, in
-- the order of $1, through the role-checked read contract. The filter is not applied again: a
-- row of the pass stays listed, with what it is now (resolved, requeued, claimed elsewhere). An
-- id no longer visible to the caller is left out. One index lookup per id.
SELECT {{dead_letter_columns}}
  FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, pos)
  JOIN dead_letter_list d ON d.id = u.id {{dead_letter_payment_join}}
 ORDER BY u.pos
