-- Outbox commands written for a dead letter or its job, newest first.
SELECT o.id, o.command, o.status, o.attempts, o.created_at, o.processed_at, o.last_error,
       o.payload_text, o.action_id
  FROM outbox_list o
  JOIN dead_letter_list d ON (o.target_type = 'dead_letter' AND o.target_id = d.id::text)
                          OR (o.target_type = 'job' AND o.target_id = d.job_ref)
 WHERE d.id = $1
 ORDER BY o.created_at DESC, o.id DESC
