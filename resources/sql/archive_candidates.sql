-- `redrive archive`: the next dead letters that may be archived with the retention period $1
-- (an interval, e.g. '90 days'), after id $2, at most $3, in id order, each with the JSON line
-- it is exported as (docs/architecture.md#retention).
SELECT c.id, c.line FROM redrive.archive_candidates($1::interval, $2::bigint, $3::integer) c
