-- The planner's estimate of the rows matching filters $1..$8 (used above the exact-count cap).
EXPLAIN (FORMAT JSON) SELECT 1 FROM dead_letter_list d WHERE {{dead_letter_filter}}
