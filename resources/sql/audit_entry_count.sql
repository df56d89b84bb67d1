-- How many audit entries match the filters $1..$7 of audit_entry_page.sql, counted up to $8.
SELECT count(*) FROM (SELECT 1 FROM audit_entry_list e WHERE {{audit_entry_filter}} LIMIT $8) x
