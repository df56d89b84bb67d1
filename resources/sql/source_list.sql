-- The sources installed in this database, for the operator to pick one: the console
-- then connects with search_path = search_path below. history_starts_at: attempts before it were
-- not captured (NULL: full history). capabilities: extra actions, e.g. release_stuck.
-- capture_active (NULL for the native source): the adapter's capture trigger is on its table with
-- its function and fires (enabled, not only as a replica), on every partition too, and the views
-- the console reads through the adapter's schema are there (without one, the console would read
-- Redrive's own view of that name further down its path). False when the queue's schema was
-- dropped and recreated (a reset, a reinstall: the adapter's triggers and views went with it,
-- history stops) or the queue's application switched the trigger off or dropped a view; `redrive
-- install-source` then reinstalls them (docs/security.md, "The queue's own role").
SELECT s.name, s.label, s.schema_name, s.schema_name || ', redrive' AS search_path,
       s.queue_schema, s.history_starts_at, s.capabilities, s.adapter_version, s.installed_at,
       CASE WHEN s.queue_schema IS NOT NULL
            THEN (SELECT count(*)
                    FROM unnest(ARRAY['dead_letter_list', 'dead_letter_detail', 'attempt_history',
                                      'idempotency_key_list', 'failure_group_list']) v (name)
                   WHERE to_regclass(quote_ident(s.schema_name) || '.' || v.name) IS NOT NULL) = 5
                 AND EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                               JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
                               JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                              WHERE n.nspname = s.queue_schema
                                AND t.tgname = 'redrive_capture_failure' AND t.tgparentid = 0
                                AND t.tgfoid = to_regprocedure(quote_ident(s.schema_name)
                                                               || '.capture_failure()')
                                AND t.tgenabled IN ('O', 'A'))
                 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                                  WHERE t.tgname = 'redrive_capture_failure'
                                    AND t.tgfoid = to_regprocedure(quote_ident(s.schema_name)
                                                                   || '.capture_failure()')
                                    AND t.tgenabled NOT IN ('O', 'A'))
       END AS capture_active
  FROM redrive.source s
 ORDER BY s.name = 'native' DESC, s.name
