-- Mark dead letters resolved: $1 action id, $2 targets, $3 resolution, $4 note, $5 reason,
-- $6 ticket, $7 OS user, $8 bulk id, $9 chunk number.
SELECT resolve_dead_letters($1::uuid, $2::jsonb, $3::text, $4::text, $5::text, $6::text,
                            $7::text, $8::uuid, $9::integer)::text AS outcome
