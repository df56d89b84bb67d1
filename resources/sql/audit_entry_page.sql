-- A keyset page of audit entries for the auditors' view, newest first (id order is chain order).
-- Filters (fragments/audit_entry_filter.sql): $1 actor (session user), $2 action, $3 from, $4 until
-- (timestamptz, NULL = open), $5 target type, $6 target id (a number) or $7 target id (text,
-- e.g. an idempotency key's scope:key); all NULL = any target. Keyset $8 (the last id shown,
-- NULL for the first page); $9 rows. Targets come as a count and the first three, before/after
-- only in audit_entry_detail.sql (a bulk chunk's lists can be long).
SELECT e.id, e.at, e.db_user, e.client_addr, e.os_user, e.action,
       jsonb_array_length(e.targets) AS target_count,
       (SELECT string_agg(coalesce(t ->> 'type', '?') || ' ' || coalesce(t ->> 'id', '?'), ', ')
          FROM (SELECT t FROM jsonb_array_elements(e.targets) t LIMIT 3) x) AS target_summary,
       e.reason, e.ticket, e.action_id, e.outcome_text, e.hash
  FROM audit_entry_list e
 WHERE {{audit_entry_filter}}
   AND ($8::bigint IS NULL OR e.id < $8::bigint)
 ORDER BY e.id DESC
 LIMIT $9
