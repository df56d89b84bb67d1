-- Edit one dead letter's payload and requeue it: $1 action id, $2 id, $3 version, $4 payload,
-- $5 reset attempts, $6 reason, $7 ticket, $8 OS user.
SELECT edit_and_requeue($1::uuid, $2::bigint, $3::integer, $4::jsonb, $5::boolean, $6::text,
                        $7::text, $8::text)::text AS outcome
