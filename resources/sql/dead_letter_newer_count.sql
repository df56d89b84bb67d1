-- Dead letters matching filters $1..$8 that are newer than the newest one shown ($9 dead_at,
-- $10 id): the "N new" badge. Counted up to 1000.
SELECT count(*) FROM (SELECT 1 FROM dead_letter_list d
                       WHERE {{dead_letter_filter}}
                         AND (d.dead_at, d.id) > ($9::timestamptz, $10::bigint)
                       LIMIT 1000) x
