-- How many attempts dead letter $1's job has, counted up to $2.
SELECT count(*) FROM (SELECT 1 FROM attempt_history a WHERE a.dead_letter_id = $1 LIMIT $2) x
