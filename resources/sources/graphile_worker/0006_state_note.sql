-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "graphile-worker", version 6: the read contract's column state_note (Redrive
-- migration 22). graphile-worker keeps a failed job where it is, so there is nothing to add to
-- its status: NULL. The rest of the view is version 1's, unchanged.
CREATE OR REPLACE VIEW redrive_graphile.dead_letter_list AS
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.message AS last_error, d.attempts, d.key AS idempotency_key,
       redrive.failure_fingerprint(d.kind, d.error_class, d.error_code, d.message) AS fingerprint,
       d.dead_at, d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note,
       d.resolved_by, d.resolved_at, coalesce(d.updated_at, d.dead_at) AS updated_at,
       'graphile-worker'::text AS source, NULL::text AS state_note
  FROM redrive_graphile.dead_letter_state d
 WHERE d.stuck OR d.failed;

UPDATE redrive.source SET adapter_version = 6 WHERE name = 'graphile-worker';
