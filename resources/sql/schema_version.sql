-- The Redrive schema version of this database (the console checks it against its own).
SELECT coalesce(max(version), 0) AS version FROM redrive.schema_version
