-- Release a stuck idempotency key: $1 action id, $2 scope, $3 key, $4 version, $5 reason,
-- $6 ticket, $7 OS user.
SELECT release_idempotency_key($1::uuid, $2::text, $3::text, $4::integer, $5::text, $6::text,
                               $7::text)::text AS outcome
