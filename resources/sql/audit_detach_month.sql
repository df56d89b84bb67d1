-- `redrive audit-detach`: record the chain head at the end of the audit month $2 (its first day)
-- -- last entry $3, its hash $4 (hex), $5 entries -- with the export's SHA-256 $6, and detach the
-- month's partition; $1 action id, $7 reason, $8 OS user (docs/audit-chain.md#detached-months).
SELECT redrive.detach_audit_month($1::uuid, $2::date, $3::bigint, $4::text, $5::bigint,
                                  $6::text, $7::text, $8::text)::text AS outcome
