-- Audit entries for the auditors' view, newest first: $1 actor, $2 action, $3 from, $4 until
-- (NULL = any), $5 target (a dead letter id as text, or NULL); keyset $6 id; $7 rows.
SELECT e.id, e.at, e.db_user, e.client_addr, e.os_user, e.action, e.targets_text, e.reason,
       e.ticket, e.before_text, e.after_text, e.action_id, e.outcome_text, e.prev_hash, e.hash
  FROM audit_entry_list e
 WHERE ($1::text IS NULL OR e.db_user = $1::text)
   AND ($2::text IS NULL OR e.action = $2::text)
   AND ($3::timestamptz IS NULL OR e.at >= $3::timestamptz)
   AND ($4::timestamptz IS NULL OR e.at < $4::timestamptz)
   AND ($5::text IS NULL OR e.targets @> jsonb_build_array(jsonb_build_object(
                                            'id', ($5::text)::bigint)))
   AND ($6::bigint IS NULL OR e.id < $6::bigint)
 ORDER BY e.id DESC
 LIMIT $7
