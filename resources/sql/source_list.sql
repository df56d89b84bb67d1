-- The sources installed in this database, for the operator to pick one: the console
-- then connects with search_path = search_path below. history_starts_at: attempts before it were
-- not captured (NULL: full history). capabilities: extra actions, e.g. release_stuck.
SELECT s.name, s.label, s.schema_name, s.schema_name || ', redrive' AS search_path,
       s.queue_schema, s.history_starts_at, s.capabilities, s.adapter_version, s.installed_at
  FROM redrive.source s
 ORDER BY s.name = 'native' DESC, s.name
