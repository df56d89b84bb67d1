-- Whether this database has a Redrive schema at all (before asking for its version).
SELECT to_regclass('redrive.schema_version') IS NOT NULL AS present
