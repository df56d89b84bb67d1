-- Freeze a bulk action's targets: $1 bulk id, $2 action, $3 targets, $4 chunk size, $5 params,
-- $6 reason, $7 ticket, $8 OS user. Returns the number of targets.
SELECT freeze_bulk($1::uuid, $2::text, $3::jsonb, $4::integer, $5::jsonb, $6::text, $7::text,
                   $8::text) AS targets
