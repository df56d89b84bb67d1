-- SPDX-License-Identifier: GPL-3.0-or-later
-- The graphile-worker adapter, version 3: its actions run on Redrive's shared action skeleton
-- (redrive.run_source_action, migration 8; docs/architecture.md, "Source adapters"). This file
-- keeps only what is graphile-worker's: how its jobs are locked and read (a job a worker holds,
-- stuck once held longer than adapter_settings.stuck_after), and how a requeue, an edit and a
-- release change them. Changed from version 2, as for every source: a target that does not exist
-- is reported as not_found (claim and edit_and_requeue said conflict); resolving or editing a job
-- a worker holds is refused with the same "release it first" as a requeue (both said conflict);
-- every conflict says what the target is now; an edit that is not applied names its target in the
-- audit entry with its result; a requeue or edit must say whether the attempt counter is reset;
-- and every action waits at most 10 s for a lock (docs/security.md, "Known limits").

DROP FUNCTION redrive_graphile.lock_targets(jsonb);

-- The targets, locked (Redrive's rows, then the jobs, in id order) and read, with Redrive's row
-- created for a job that has none yet (a stuck job that never failed). Every target is returned
-- once, a missing one with version NULL. A job is held while a worker has it locked
-- (locked_at, locked_by); the hold counts as stuck from locked_at + stuck_after. Not granted.
CREATE FUNCTION redrive_graphile.lock_action_targets(p_targets jsonb, p_action text)
RETURNS SETOF redrive.source_target
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO redrive.source_job (id, source, job_ref, queue, kind)
    SELECT d.id, 'graphile-worker', d.job_ref, d.queue, d.kind
      FROM redrive_graphile.job_state d
     WHERE d.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
       AND d.row_version IS NULL
     ORDER BY d.id
    ON CONFLICT DO NOTHING;
    PERFORM 1 FROM redrive.source_job s
     WHERE s.source = 'graphile-worker'
       AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY s.id FOR UPDATE;
    PERFORM 1 FROM graphile_worker._private_jobs j
     WHERE redrive_graphile.dead_letter_id(j.id)
           IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY j.id FOR UPDATE;
    RETURN QUERY
    SELECT t.id, t.version, d.version, d.job_ref, d.status, d.job_state,
           d.locked_by, d.locked_at, d.stuck_at, d.payload::jsonb,
           CASE WHEN d.id IS NULL THEN NULL
                WHEN p_action = 'requeue'
                THEN jsonb_build_object('id', t.id, 'status', d.status, 'attempts', d.attempts,
                                        'max_attempts', d.max_attempts)
                WHEN p_action = 'release_stuck'
                THEN jsonb_build_object('id', t.id, 'locked_by', d.locked_by,
                                        'locked_at', d.locked_at, 'attempts', d.attempts,
                                        'max_attempts', d.max_attempts) END,
           jsonb_build_object('job_id', d.job_id, 'attempts', d.attempts,
                              'max_attempts', d.max_attempts, 'job_queue_id', d.job_queue_id)
      FROM (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                   (e ->> 'version')::integer AS version
              FROM jsonb_array_elements(p_targets) e) t
      LEFT JOIN redrive_graphile.dead_letter_state d ON d.id = t.id
     ORDER BY t.id;
END
$$;

-- The queue's side of an action on its applied targets. Not granted.
-- * requeue, edit_and_requeue: graphile-worker's documented admin function reschedule_jobs, once
--   per job (max_attempts differs): run now, with one more attempt (max_attempts =
--   attempts + 1) or, with reset_attempts, attempts back to 0; an edit replaces the payload first.
-- * release_stuck: what graphile-worker does to a lock older than 4 hours (resetLockedAt:
--   locked_at and locked_by cleared, run_at at least now, the job's named queue unlocked if that
--   worker held it), for these jobs and their workers only; the lost attempt is recorded as
--   abandoned. The job then runs again if it has attempts left, or is failed for good.
CREATE FUNCTION redrive_graphile.change_jobs(p_rows redrive.source_target[], p_action text,
                                             p_params jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c redrive.source_target;
    v_job bigint;
    v_reset boolean := (p_params ->> 'reset_attempts')::boolean;
    v_now timestamptz := clock_timestamp();
BEGIN
    IF p_action NOT IN ('requeue', 'edit_and_requeue', 'release_stuck') THEN
        RAISE EXCEPTION 'graphile-worker jobs change only on a requeue or a release, not on %',
                        p_action USING ERRCODE = 'feature_not_supported';
    END IF;
    FOREACH c IN ARRAY p_rows LOOP
        v_job := (c.job ->> 'job_id')::bigint;
        IF p_action = 'release_stuck' THEN
            INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at,
                                                finished_at, outcome, error_class, error_code,
                                                message, worker_id)
            VALUES (c.id, (c.job ->> 'attempts')::integer, least(c.held_since, v_now), v_now,
                    'abandoned', 'ambiguous', 'worker_lost',
                    format('worker %s held the job from %s without a result; released by %s: %s',
                           c.held_by, c.held_since, session_user, p_params ->> 'reason'),
                    c.held_by);
            UPDATE graphile_worker._private_jobs
               SET locked_at = NULL, locked_by = NULL, run_at = greatest(run_at, now())
             WHERE id = v_job AND locked_by = c.held_by;
            UPDATE graphile_worker._private_job_queues
               SET locked_at = NULL, locked_by = NULL
             WHERE id = (c.job ->> 'job_queue_id')::integer AND locked_by = c.held_by;
        ELSE
            IF p_action = 'edit_and_requeue' THEN
                UPDATE graphile_worker._private_jobs SET payload = (p_params -> 'payload')::json
                 WHERE id = v_job;
            END IF;
            PERFORM graphile_worker.reschedule_jobs(
                ARRAY[v_job], run_at => now(),
                attempts => CASE WHEN v_reset THEN 0 END,
                max_attempts => CASE WHEN v_reset THEN NULL
                                     ELSE greatest((c.job ->> 'max_attempts')::integer,
                                                   (c.job ->> 'attempts')::integer + 1) END);
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION redrive_graphile.lock_action_targets(jsonb, text),
                       redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)
    FROM PUBLIC;

-- The actions (migration 5's signatures, release_stuck_jobs from migration 6; roles checked by
-- the skeleton: requeue and edit need redrive_oncall, the others redrive_oncall or
-- redrive_support).
CREATE OR REPLACE FUNCTION redrive_graphile.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
                                                      p_reset_attempts boolean, p_reason text,
                                                      p_ticket text DEFAULT NULL,
                                                      p_os_user text DEFAULT NULL,
                                                      p_bulk_id uuid DEFAULT NULL,
                                                      p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', 'requeue', p_action_id, p_targets,
    jsonb_build_object('reset_attempts', p_reset_attempts, 'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_graphile.lock_action_targets(jsonb, text)',
    'redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)',
    'graphile_worker.reschedule_jobs');

CREATE OR REPLACE FUNCTION redrive_graphile.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
                                                  p_version integer, p_payload jsonb,
                                                  p_reset_attempts boolean, p_reason text,
                                                  p_ticket text DEFAULT NULL,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', 'edit_and_requeue', p_action_id,
    jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)),
    jsonb_build_object('payload', p_payload, 'reset_attempts', p_reset_attempts,
                       'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, NULL, NULL,
    'redrive_graphile.lock_action_targets(jsonb, text)',
    'redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)', NULL);

-- graphile-worker has no resolved state: the resolution is kept in redrive.source_job and the
-- job stays failed in graphile-worker.
CREATE OR REPLACE FUNCTION redrive_graphile.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
                                                      p_resolution text, p_note text,
                                                      p_reason text, p_ticket text DEFAULT NULL,
                                                      p_os_user text DEFAULT NULL,
                                                      p_bulk_id uuid DEFAULT NULL,
                                                      p_chunk_no integer DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', 'resolve', p_action_id, p_targets,
    jsonb_build_object('resolution', p_resolution, 'note', p_note, 'reason', p_reason,
                       'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_graphile.lock_action_targets(jsonb, text)', NULL, NULL);

CREATE OR REPLACE FUNCTION redrive_graphile.claim_dead_letters(p_action_id uuid, p_targets jsonb,
                                                    p_release boolean, p_reason text,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', CASE WHEN p_release THEN 'unclaim' WHEN NOT p_release THEN 'claim' END,
    p_action_id, p_targets, jsonb_build_object('reason', p_reason),
    p_reason, NULL, p_os_user, NULL, NULL,
    'redrive_graphile.lock_action_targets(jsonb, text)', NULL, NULL);

-- Release stuck jobs: for each confirmed job still held, and held longer than
-- adapter_settings.stuck_after, graphile-worker's resetLockedAt (change_jobs above). A job held
-- more recently is refused: its worker may be alive.
CREATE OR REPLACE FUNCTION redrive_graphile.release_stuck_jobs(p_action_id uuid, p_targets jsonb,
                                                    p_reason text, p_ticket text DEFAULT NULL,
                                                    p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'graphile-worker', 'release_stuck', p_action_id, p_targets,
    jsonb_build_object('reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, NULL, NULL,
    'redrive_graphile.lock_action_targets(jsonb, text)',
    'redrive_graphile.change_jobs(redrive.source_target[], text, jsonb)',
    'graphile-worker resetLockedAt, for these jobs');

UPDATE redrive.source SET adapter_version = 3 WHERE name = 'graphile-worker';
