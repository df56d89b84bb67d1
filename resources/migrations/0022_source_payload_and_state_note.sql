-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 22: what a queue source keeps after the library lets go of a
-- job, and a note next to a dead letter's status in the list.
--
-- redrive.source_job.payload and .origin (docs/architecture.md, "Nothing disappears (pg-boss
-- 12)"): pg-boss 12 deletes a failed job deletion_seconds after it failed, payload and all. The
-- adapters' capture triggers copy the job's payload (pg-boss `data`) into Redrive's record at
-- every failure, and where the job came from a dead-letter queue or a redrive (pg-boss
-- source_name, source_id, source_root_id) that too, so the case view shows both after the
-- deletion. Only the adapters' SECURITY DEFINER triggers write these columns.
--
-- dead_letter_list.state_note (read contract, migration 4): what the queue says of a listed dead
-- letter beyond its status, shown next to the status in the list ("open (archived)" for a
-- pg-boss 10 failure its maintenance moved to pgboss.archive); NULL when there is nothing to
-- add. The native source has nothing to add. Each adapter line adds the column to its own view.

ALTER TABLE redrive.source_job
    ADD COLUMN payload jsonb,
    ADD COLUMN origin jsonb;
COMMENT ON COLUMN redrive.source_job.payload IS
    'The job''s payload as the library held it at the last captured failure (pg-boss data): '
    'kept after the library deletes the job';
COMMENT ON COLUMN redrive.source_job.origin IS
    'Where the job came from, as the library recorded it at the last captured failure '
    '(pg-boss: source_queue, source_id, source_root_id); NULL when it names nothing';

CREATE OR REPLACE VIEW redrive.dead_letter_list AS
SELECT d.id, d.job_id::text AS job_ref, d.queue, d.kind, d.status, d.reason, d.error_class,
       d.error_code, d.last_error, d.attempts, d.idempotency_key, d.fingerprint, d.dead_at,
       d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note, d.resolved_by,
       d.resolved_at, d.updated_at, 'native'::text AS source, NULL::text AS state_note
  FROM redrive.dead_letter d;
