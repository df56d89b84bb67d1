-- Resolve a reconciliation mismatch: $1 action id, $2 id, $3 version, $4 resolution, $5 reason,
-- $6 ticket, $7 OS user.
SELECT resolve_mismatch($1::uuid, $2::bigint, $3::integer, $4::text, $5::text, $6::text,
                        $7::text)::text AS outcome
