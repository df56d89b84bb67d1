-- Request a compensation: $1 action id, $2 target type, $3 target id, $4 version, $5 kind,
-- $6 amount in minor units of the payment's currency, $7 reason, $8 ticket, $9 OS user.
SELECT request_compensation($1::uuid, $2::text, $3::bigint, $4::integer, $5::text, $6::bigint,
                            $7::text, $8::text, $9::text)::text AS outcome
