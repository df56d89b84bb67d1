-- The server's clock, so "now" in the console is the database's now
-- (docs/domain.md#times-are-timestamptz-on-the-server-clock).
SELECT clock_timestamp() AS server_now
