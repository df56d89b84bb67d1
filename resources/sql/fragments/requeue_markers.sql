-- The applied requeues (and edit-and-requeues) of dead letter $1, from the audit log, for native
-- and adapter sources alike: when, by whom (the login the server authenticated), the action id
-- the audit log shows, and whether the attempt counter was reset (NULL when the action did not
-- record it). Served by the GIN index on targets.
SELECT e.id AS audit_id, e.at, e.db_user, e.action, e.action_id::text AS action_id,
       coalesce((e.after_text::jsonb ->> 'reset_attempts')::boolean,
                (SELECT (o.payload_text::jsonb ->> 'reset_attempts')::boolean
                   FROM outbox_list o
                  WHERE o.action_id = e.action_id AND o.command = 'requeue'
                  LIMIT 1)) AS reset_attempts
  FROM audit_entry_list e
 WHERE e.targets @> jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', $1::bigint,
                                                         'result', 'applied'))
   AND e.action IN ('requeue', 'edit_and_requeue')
