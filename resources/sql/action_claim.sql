-- Claim (or, with $3 true, release) dead letters: $1 action id, $2 targets, $4 reason, $5 OS user.
SELECT claim_dead_letters($1::uuid, $2::jsonb, $3::boolean, $4::text, $5::text)::text AS outcome
