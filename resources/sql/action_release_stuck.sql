-- Release jobs a dead worker still holds (sources with the release_stuck capability): $1 action
-- id, $2 targets [{"id", "version"}], $3 reason, $4 ticket, $5 OS user.
SELECT release_stuck_jobs($1::uuid, $2::jsonb, $3::text, $4::text, $5::text)::text AS outcome
