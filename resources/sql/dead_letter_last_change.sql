-- Who last changed each of dead letters $1 (bigint[]) and when, for a conflict's "resolved by
-- demo_support 2 min ago": the newest audit entry that applied a change to it (operator or
-- worker), its action, who (the login, and the OS user the client reported), when, and how long
-- ago by the server's clock, in whole seconds (NULL when the entry's time is not finite). A dead letter no audit entry changed has no row.
-- Served by the GIN index on the audit entries' targets.
SELECT t.id, e.action, e.db_user, e.os_user, e.at,
       CASE WHEN isfinite(e.at)
            THEN floor(extract(epoch FROM clock_timestamp()) - extract(epoch FROM e.at))::bigint
       END AS age_seconds
  FROM unnest($1::bigint[]) AS t (id)
  CROSS JOIN LATERAL (
        SELECT a.action, a.db_user, a.os_user, a.at
          FROM audit_entry_list a
         WHERE a.targets @> jsonb_build_array(jsonb_build_object('type', 'dead_letter',
                                                                 'id', t.id,
                                                                 'result', 'applied'))
         ORDER BY a.id DESC
         LIMIT 1) e
 ORDER BY t.id
