-- SPDX-License-Identifier: GPL-3.0-or-later
-- The pg-boss adapter, version 3: its actions run on Redrive's shared action skeleton
-- (redrive.run_source_action, migration 8; docs/architecture.md, "Source adapters"). This file
-- keeps only what is pg-boss's: how its jobs are locked and read, and how a requeue changes
-- them (pg-boss's own retry()). Changed from version 2, as for every source: a target that does
-- not exist is reported as not_found (claim and edit_and_requeue said conflict), every conflict
-- says what the target is now, an edit that is not applied names its target in the audit entry
-- with its result, a requeue or edit must say whether the attempt counter is reset, and every
-- action waits at most 10 s for a lock (docs/security.md, "Known limits").

DROP FUNCTION redrive_pgboss.lock_targets(jsonb);

-- The targets, locked (Redrive's rows, then pg-boss's jobs, in id order) and read. Every target
-- is returned once, a missing one with version NULL. No job is ever held: pg-boss itself fails an
-- active job once its expire_in has passed, and a job it holds as active is not open. Not
-- granted: only the actions call it, through the skeleton.
CREATE FUNCTION redrive_pgboss.lock_action_targets(p_targets jsonb, p_action text)
RETURNS SETOF redrive.source_target
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM 1 FROM redrive.source_job s
     WHERE s.source = 'pgboss'
       AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY s.id FOR UPDATE;
    PERFORM 1 FROM redrive.source_job s
      JOIN pgboss.job j ON j.id = s.job_ref::uuid AND j.name = s.queue
     WHERE s.source = 'pgboss'
       AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
     ORDER BY s.id FOR UPDATE OF j;
    RETURN QUERY
    SELECT t.id, t.version, d.version, d.job_ref, d.status, d.job_state,
           NULL::text, NULL::timestamptz, NULL::timestamptz, (d.j).data,
           CASE WHEN p_action = 'requeue' AND d.id IS NOT NULL
                THEN jsonb_build_object('id', t.id, 'status', d.status, 'job_state', d.job_state,
                                        'retry_count', (d.j).retry_count,
                                        'retry_limit', (d.j).retry_limit) END,
           NULL::jsonb
      FROM (SELECT DISTINCT ON ((e ->> 'id')::bigint) (e ->> 'id')::bigint AS id,
                   (e ->> 'version')::integer AS version
              FROM jsonb_array_elements(p_targets) e) t
      LEFT JOIN redrive_pgboss.job_state d ON d.id = t.id
     ORDER BY t.id;
END
$$;

-- Requeue (and edit_and_requeue) of the applied targets exactly as pg-boss 10's retryJobs
-- (src/plans.js): state 'retry' and one more attempt (retry_limit + 1), earlier attempts kept;
-- with reset_attempts the whole retry budget again (retry_count 0, started_on NULL, retry_limit
-- as it was). An edit replaces the job's data too. Not granted.
CREATE FUNCTION redrive_pgboss.change_jobs(p_rows redrive.source_target[], p_action text,
                                           p_params jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_reset boolean := (p_params ->> 'reset_attempts')::boolean;
BEGIN
    IF p_action NOT IN ('requeue', 'edit_and_requeue') THEN
        RAISE EXCEPTION 'pg-boss jobs change only on a requeue, not on %', p_action
              USING ERRCODE = 'feature_not_supported';
    END IF;
    UPDATE pgboss.job j
       SET data = CASE WHEN p_action = 'edit_and_requeue' THEN p_params -> 'payload'
                       ELSE j.data END,
           state = 'retry',
           retry_limit = CASE WHEN v_reset THEN j.retry_limit ELSE j.retry_limit + 1 END,
           retry_count = CASE WHEN v_reset THEN 0 ELSE j.retry_count END,
           started_on = CASE WHEN v_reset THEN NULL ELSE j.started_on END
      FROM redrive.source_job s
     WHERE s.id IN (SELECT r.id FROM unnest(p_rows) r) AND s.source = 'pgboss'
       AND j.name = s.queue AND j.id = s.job_ref::uuid AND j.state = 'failed';
END
$$;
REVOKE ALL ON FUNCTION redrive_pgboss.lock_action_targets(jsonb, text),
                       redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)
    FROM PUBLIC;

-- The actions (migration 5's signatures, roles checked by the skeleton: requeue and edit need
-- redrive_oncall, the others redrive_oncall or redrive_support).
CREATE OR REPLACE FUNCTION redrive_pgboss.requeue_dead_letters(p_action_id uuid, p_targets jsonb,
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
    'pgboss', 'requeue', p_action_id, p_targets,
    jsonb_build_object('reset_attempts', p_reset_attempts, 'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_pgboss.lock_action_targets(jsonb, text)',
    'redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)',
    'pg-boss retry(): state retry');

CREATE OR REPLACE FUNCTION redrive_pgboss.edit_and_requeue(p_action_id uuid, p_dead_letter bigint,
                                                p_version integer, p_payload jsonb,
                                                p_reset_attempts boolean, p_reason text,
                                                p_ticket text DEFAULT NULL,
                                                p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'pgboss', 'edit_and_requeue', p_action_id,
    jsonb_build_array(jsonb_build_object('id', p_dead_letter, 'version', p_version)),
    jsonb_build_object('payload', p_payload, 'reset_attempts', p_reset_attempts,
                       'reason', p_reason, 'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, NULL, NULL,
    'redrive_pgboss.lock_action_targets(jsonb, text)',
    'redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)', NULL);

-- pg-boss has no resolved state: the resolution is kept in redrive.source_job and the job stays
-- failed in pg-boss.
CREATE OR REPLACE FUNCTION redrive_pgboss.resolve_dead_letters(p_action_id uuid, p_targets jsonb,
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
    'pgboss', 'resolve', p_action_id, p_targets,
    jsonb_build_object('resolution', p_resolution, 'note', p_note, 'reason', p_reason,
                       'ticket', p_ticket),
    p_reason, p_ticket, p_os_user, p_bulk_id, p_chunk_no,
    'redrive_pgboss.lock_action_targets(jsonb, text)', NULL, NULL);

CREATE OR REPLACE FUNCTION redrive_pgboss.claim_dead_letters(p_action_id uuid, p_targets jsonb,
                                                  p_release boolean, p_reason text,
                                                  p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
RETURN redrive.run_source_action(
    'pgboss', CASE WHEN p_release THEN 'unclaim' WHEN NOT p_release THEN 'claim' END,
    p_action_id, p_targets, jsonb_build_object('reason', p_reason),
    p_reason, NULL, p_os_user, NULL, NULL,
    'redrive_pgboss.lock_action_targets(jsonb, text)', NULL, NULL);

-- release_stuck_jobs still refuses (pg-boss jobs are never stuck); it bounds its lock waits like
-- every action.
ALTER FUNCTION redrive_pgboss.release_stuck_jobs(uuid, jsonb, text, text, text)
    SET lock_timeout = '10s';

UPDATE redrive.source SET adapter_version = 3 WHERE name = 'pgboss';
