-- Audit entries that name dead letter $1 among their targets, newest first; served by the GIN
-- index on targets (targets hold objects like {"type": "dead_letter", "id": 42, ...}).
SELECT e.id, e.at, e.db_user, e.os_user, e.action, e.reason, e.ticket, e.outcome_text,
       e.action_id
  FROM audit_entry_list e
 WHERE e.targets @> jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', $1::bigint))
 ORDER BY e.id DESC
 LIMIT 200
