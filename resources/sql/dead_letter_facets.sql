-- The queues and kinds the filter bar offers, from the source's small facet list (migration 18:
-- never a scan of the dead letters).
SELECT f.facet, f.value FROM dead_letter_facet_list f ORDER BY 1, 2
