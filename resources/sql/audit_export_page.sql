-- A page of the audit export, oldest first, every field as the chain hashes it: the filters
-- $1..$7 of audit_entry_page.sql; entries after id $8 (NULL: from the start) up to and including
-- the chain head $9 read when the export began (appends commit in id order, so every entry up
-- to the head is visible and none after it slips in); $10 rows. `at` is UTC with microseconds,
-- as in redrive.audit_canonical; JSON columns are jsonb text.
SELECT e.id, to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
       e.db_user, e.client_addr, e.os_user, e.action, e.targets_text AS targets, e.reason,
       e.ticket, e.before_text AS before, e.after_text AS after, e.action_id,
       e.outcome_text AS outcome, e.prev_hash, e.hash
  FROM audit_entry_list e
 WHERE {{audit_entry_filter}}
   AND ($8::bigint IS NULL OR e.id > $8::bigint)
   AND e.id <= $9::bigint
 ORDER BY e.id
 LIMIT $10
