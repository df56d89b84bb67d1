-- A note: $1 action id, $2 target type, $3 target id, $4 note, $5 OS user.
SELECT add_note($1::uuid, $2::text, $3::text, $4::text, $5::text)::text AS outcome
