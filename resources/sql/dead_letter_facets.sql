-- The distinct queues and kinds that have dead letters, for the filter menus.
SELECT 'queue' AS facet, queue AS value FROM (SELECT DISTINCT queue FROM dead_letter_list) q
UNION ALL
SELECT 'kind', kind FROM (SELECT DISTINCT kind FROM dead_letter_list) k
ORDER BY 1, 2
