-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss" (pg-boss 10.x), version 7: the list says which failures pg-boss's
-- maintenance has moved to pgboss.archive (read contract column state_note, Redrive migration
-- 22). The case view said so already (job_state 'archived', version 5); the list showed them as
-- plain "open". The rest of the view is version 5's, unchanged.
CREATE OR REPLACE VIEW redrive_pgboss.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.attempts, d.idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.last_error)
           AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, d.updated_at, 'pgboss'::text AS source,
       CASE WHEN d.job_state = 'archived' THEN 'archived' END AS state_note
  FROM redrive_pgboss.job_state d
 WHERE d.job_state IN ('failed', 'archived');

UPDATE redrive.source SET adapter_version = 7 WHERE name = 'pgboss';
