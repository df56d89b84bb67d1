-- One audit entry in full, for the details pane: $1 id.
SELECT e.id, e.at, e.db_user, e.client_addr, e.os_user, e.action, e.targets_text, e.reason,
       e.ticket, e.before_text, e.after_text, e.action_id, e.outcome_text, e.prev_hash, e.hash
  FROM audit_entry_list e
 WHERE e.id = $1::bigint
