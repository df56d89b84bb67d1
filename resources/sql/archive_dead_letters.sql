-- `redrive archive`: remove exactly the exported dead letters $2 (with their jobs and attempts)
-- when SHA-256 over their lines as they are now is $3 and each may still go with the period $4;
-- $1 action id, $5 file name, $6 byte offset of the lines in it, $7 reason, $8 OS user
-- (docs/architecture.md#retention).
SELECT redrive.archive_dead_letters($1::uuid, $2::bigint[], $3::text, $4::interval, $5::text,
                                    $6::bigint, $7::text, $8::text)::text AS outcome
