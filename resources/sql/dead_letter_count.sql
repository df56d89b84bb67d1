-- How many dead letters match the filters $1..$8, counted up to $9 (beyond it the console shows
-- an estimate instead of counting a million rows).
SELECT count(*) FROM (SELECT 1 FROM dead_letter_list d WHERE {{dead_letter_filter}} LIMIT $9) x
