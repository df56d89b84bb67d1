-- The server's clock, so "now" in the console is the database's now (DESIGN §3 rule 8).
SELECT clock_timestamp() AS server_now
