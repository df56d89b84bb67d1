-- Requeue dead letters: $1 action id, $2 targets [{"id", "version"}], $3 reset attempts,
-- $4 reason, $5 ticket, $6 OS user, $7 bulk id, $8 chunk number. Returns the outcome as JSON.
SELECT requeue_dead_letters($1::uuid, $2::jsonb, $3::boolean, $4::text, $5::text, $6::text,
                            $7::uuid, $8::integer)::text AS outcome
