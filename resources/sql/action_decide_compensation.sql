-- Approve ($4 true) or reject a compensation request: $1 action id, $2 request, $3 version,
-- $5 reason, $6 OS user.
SELECT decide_compensation($1::uuid, $2::bigint, $3::integer, $4::boolean, $5::text,
                           $6::text)::text AS outcome
