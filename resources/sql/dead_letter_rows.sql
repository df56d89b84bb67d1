-- A page of the dead-letter list by a frozen pass (docs/architecture.md#paging-a-frozen-pass):
-- the dead letters $1 (ids, a slice of dead_letter_keys.sql's list) as the list shows them, in
-- the order of $1, through the role-checked read contract. The filter is not applied again: a
-- row of the pass stays listed, with what it is now (resolved, requeued, claimed elsewhere). An
-- id no longer visible to the caller is left out. One index lookup per id, wherever the page is
-- in the list: the lateral subquery (kept apart by OFFSET 0) is never turned into a hash join
-- that reads the whole table (tst_read_rollups checks the plan).
SELECT {{dead_letter_columns}}
  FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, pos)
 CROSS JOIN LATERAL (SELECT x.* FROM dead_letter_list x WHERE x.id = u.id OFFSET 0) d
       {{dead_letter_payment_join}}
 ORDER BY u.pos
