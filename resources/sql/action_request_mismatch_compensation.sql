-- Request a refund from a reconciliation mismatch (the duplicate charge of a duplicate_external,
-- the difference of an amount_mismatch): $1 action id, $2 mismatch id, $3 version, $4 amount in
-- minor units of the charge's currency, $5 reason, $6 ticket, $7 OS user.
SELECT request_mismatch_compensation($1::uuid, $2::bigint, $3::integer, $4::bigint, $5::text,
                                     $6::text, $7::text)::text AS outcome
