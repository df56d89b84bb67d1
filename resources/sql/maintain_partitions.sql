-- `redrive maintain`: create this UTC month's and the next $1 months' partitions of the
-- partitioned tables (docs/architecture.md#partitions); one row per partition created.
SELECT p.name FROM redrive.maintain_partitions($1::integer) p(name)
