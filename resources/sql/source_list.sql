-- The sources installed in this database, for the operator to pick one: the console
-- then connects with search_path = search_path below. history_starts_at: attempts before it were
-- not captured (NULL: full history). capabilities: extra actions, e.g. release_stuck.
-- capture_active (NULL for the native source): the adapter's capture trigger and views are there.
-- False when the queue's schema was dropped and recreated (a reset, a reinstall): the adapter's
-- triggers and views went with it, history stops, and `redrive install-source` reinstalls them.
SELECT s.name, s.label, s.schema_name, s.schema_name || ', redrive' AS search_path,
       s.queue_schema, s.history_starts_at, s.capabilities, s.adapter_version, s.installed_at,
       CASE WHEN s.queue_schema IS NOT NULL
            THEN to_regclass(quote_ident(s.schema_name) || '.dead_letter_list') IS NOT NULL
                 AND EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                               JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
                               JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                              WHERE n.nspname = s.queue_schema
                                AND t.tgname = 'redrive_capture_failure'
                                AND t.tgenabled <> 'D')
       END AS capture_active
  FROM redrive.source s
 ORDER BY s.name = 'native' DESC, s.name
