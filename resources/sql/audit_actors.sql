-- The distinct actors (session users) of the audit log, for the view's actor filter: a loose
-- index scan over (db_user, at), one probe per actor instead of reading every entry; $1 rows.
WITH RECURSIVE a(actor) AS (
    SELECT min(e.db_user) FROM audit_entry_list e
    UNION ALL
    SELECT (SELECT min(e.db_user) FROM audit_entry_list e WHERE e.db_user > a.actor)
      FROM a WHERE a.actor IS NOT NULL
)
SELECT a.actor FROM a WHERE a.actor IS NOT NULL LIMIT $1
