-- SPDX-License-Identifier: GPL-3.0-or-later
-- What the two pg-boss lines of the Redrive source "pgboss" define alike: pg-boss 10's
-- (pgboss/NNNN_pgboss10_adapter.sql) and pg-boss 12's (pgboss12/NNNN_pgboss12_adapter.sql). Each
-- includes this file (`\ir`, as psql does; Redrive's installer expands it the same way) right
-- after it records the source, so these functions and lists exist before anything of the line's
-- own. Nothing here reads pg-boss's tables: that is each line's own part (the confined
-- functions, the job_state view), which these call by name. A change here is a change to both
-- lines: rename both files to their next version (each file's header says why).

-- ---------------------------------------------------------------------------------------------
-- What a pg-boss output (the serialized Error, or {"value": ...} for a non-object) says.
CREATE FUNCTION redrive_pgboss.error_message(o jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN coalesce(o ->> 'message', o -> 'value' ->> 'message', o ->> 'value', o::text);

CREATE FUNCTION redrive_pgboss.error_code(o jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN coalesce(o ->> 'code', o -> 'value' ->> 'code', nullif(o ->> 'name', 'Error'));

-- The structured fields of a serialized error, before its text, through the rule table of
-- Redrive's migration 17 with pg-boss's own rules first (docs/architecture.md "Error classes"):
-- an explicit errorClass, then retryable (false: permanent), then code, HTTP status, SMTP
-- responseCode, name. pg-boss keeps the handler's Error as serialize-error wrote it, own fields
-- included. Each line's error_class() says where its output keeps the error.
CREATE FUNCTION redrive_pgboss.classify_error(e jsonb, p_message text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN (SELECT w.error_class FROM redrive.classify_source_error_why(
    'pgboss', p_message,
    coalesce(e ->> 'code', e ->> 'status', e ->> 'statusCode',
             'SMTP' || (e ->> 'responseCode'), nullif(e ->> 'name', 'Error')),
    coalesce(e ->> 'errorClass',
             CASE WHEN jsonb_typeof(e -> 'retryable') = 'boolean' AND NOT (e -> 'retryable')::boolean
                  THEN 'permanent' END)) w);

REVOKE ALL ON FUNCTION redrive_pgboss.error_message(jsonb), redrive_pgboss.error_code(jsonb),
                       redrive_pgboss.classify_error(jsonb, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive_pgboss.error_message(jsonb), redrive_pgboss.error_code(jsonb),
                          redrive_pgboss.classify_error(jsonb, text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- ---------------------------------------------------------------------------------------------
-- Capture of a success: a job that failed before and now completed becomes a 'succeeded'
-- attempt. Each line's capture_failure() records the failures, and its triggers call both
-- (docs/security.md, "The queue's own role", for the checks before NEW is read).
CREATE OR REPLACE FUNCTION redrive_pgboss.capture_success() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
BEGIN
    -- Before anything reads a value of NEW: the type of each column read, from the row itself
    -- (docs/security.md, "The queue's own role").
    PERFORM redrive_pgboss.refuse_retyped_columns('pgboss.job'::pg_catalog.regclass,
        ARRAY['id', 'name', 'retry_count', 'started_on'],
        ARRAY[pg_catalog.pg_typeof(NEW.id), pg_catalog.pg_typeof(NEW.name),
              pg_catalog.pg_typeof(NEW.retry_count), pg_catalog.pg_typeof(NEW.started_on)],
        ARRAY['pg_catalog.uuid', 'pg_catalog.text', 'pg_catalog.int4',
              'pg_catalog.timestamptz']::pg_catalog.regtype[]);
    -- No cast on the queue's own types (docs/security.md, "The queue's own role").
    IF EXISTS (SELECT FROM pg_catalog.pg_cast k
                WHERE k.castsource OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) TG_RELID)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) TG_RELID
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))
                   OR k.casttarget OPERATOR(pg_catalog.=) ANY (ARRAY(
                    SELECT t.oid FROM pg_catalog.pg_type t
                     WHERE t.typnamespace OPERATOR(pg_catalog.=)
                               (SELECT c.relnamespace FROM pg_catalog.pg_class c
                                 WHERE c.oid OPERATOR(pg_catalog.=) TG_RELID)
                        OR (t.typnamespace
                                OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                            AND t.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
                                SELECT a.atttypid FROM pg_catalog.pg_attribute a
                                 WHERE a.attrelid OPERATOR(pg_catalog.=) TG_RELID
                                   AND a.attnum OPERATOR(pg_catalog.>) 0)))))) THEN
        RAISE EXCEPTION 'a cast on a type of the queue''s job table exists: Redrive''s '
                        'capture would run it as the installer'
              USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    UPDATE redrive.source_job SET succeeded_at = v_now, version = version + 1, updated_at = v_now
     WHERE source = 'pgboss' AND job_ref = NEW.id::text AND queue = NEW.name
    RETURNING id INTO v_id;
    IF FOUND THEN
        INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                            outcome)
        VALUES (v_id, NEW.retry_count + 1, least(coalesce(NEW.started_on, v_now), v_now), v_now,
                'succeeded');
    END IF;
    RETURN NULL;
END
$$;

-- Times at the ends of timestamptz's range (Redrive's migration 34,
-- docs/domain.md "Times at the ends of the range"). The queue may hold 'infinity', '-infinity' or
-- a year near 294276 in a job's times; no read of the console fails on one:
-- - the retry history's duration is NULL when either end is infinite, and computed from each
--   end's epoch, so that a span of centuries neither fails nor overflows;
-- - the overview's buckets count an instant only when it is finite and before 294000 (date_bin()
--   from the epoch overflows in the last years of the range).

CREATE OR REPLACE VIEW redrive_pgboss.attempt_history AS
SELECT a.source_job_id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       CASE WHEN isfinite(a.started_at) AND isfinite(a.finished_at)
            THEN round((extract(epoch FROM a.finished_at) - extract(epoch FROM a.started_at))
                       * 1000)::bigint END AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'pgboss';

-- pg-boss keeps no idempotency-key records and Redrive's requeue of its jobs needs no outbox
-- command (the action calls pg-boss's own retry in the same transaction): both lists are empty
-- here, rather than showing the native source's rows.
CREATE VIEW redrive_pgboss.idempotency_key_list AS
SELECT NULL::text AS scope, NULL::text AS key, NULL::text AS request_hash, NULL::text AS state,
       NULL::text AS job_ref, NULL::text AS locked_by, NULL::timestamptz AS locked_until,
       NULL::text AS result_text, NULL::text AS error_message, NULL::text AS conflicting_hash,
       NULL::integer AS conflict_count, NULL::timestamptz AS last_conflict_at,
       NULL::timestamptz AS created_at, NULL::timestamptz AS updated_at,
       NULL::timestamptz AS expires_at, NULL::integer AS version, NULL::boolean AS stuck
 WHERE false;

CREATE VIEW redrive_pgboss.outbox_list AS
SELECT NULL::bigint AS id, NULL::text AS command, NULL::text AS target_type,
       NULL::text AS target_id, NULL::text AS payload_text, NULL::text AS status,
       NULL::integer AS attempts, NULL::timestamptz AS available_at,
       NULL::timestamptz AS created_at, NULL::timestamptz AS processed_at,
       NULL::text AS last_error, NULL::uuid AS action_id
 WHERE false;

CREATE VIEW redrive_pgboss.attempt_timeline AS
SELECT a.started_at, a.outcome, a.error_class
  FROM redrive.source_attempt a
  JOIN redrive.source_job s ON s.id = a.source_job_id
 WHERE s.source = 'pgboss';

GRANT SELECT ON redrive_pgboss.attempt_history, redrive_pgboss.idempotency_key_list,
                redrive_pgboss.outbox_list, redrive_pgboss.attempt_timeline
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

-- ---------------------------------------------------------------------------------------------
-- The actions: Redrive's rows locked and changed by the installer's functions, through the
-- skeleton (redrive.run_source_action); pg-boss's rows only through each line's confined
-- functions (queue_lock_jobs, queue_retry_jobs).
CREATE OR REPLACE FUNCTION redrive_pgboss.lock_action_targets(p_targets jsonb, p_action text)
RETURNS SETOF redrive.source_target
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_jobs jsonb;
BEGIN
    SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.job_ref, 'name', s.queue)
                              ORDER BY s.id), '[]')
      INTO v_jobs
      FROM (SELECT s.id, s.job_ref, s.queue FROM redrive.source_job s
             WHERE s.source = 'pgboss'
               AND s.id IN (SELECT (e ->> 'id')::bigint FROM jsonb_array_elements(p_targets) e)
             ORDER BY s.id FOR UPDATE) s;
    PERFORM redrive_pgboss.queue_lock_jobs(v_jobs);
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

-- Requeue (and edit_and_requeue) of the applied targets exactly as the library's own retryJobs,
-- through the line's queue_retry_jobs (its comment says what that version of pg-boss does): state
-- 'retry' and one more attempt (retry_limit + 1), earlier attempts kept; with reset_attempts the
-- whole retry budget again (retry_count 0, started_on NULL, retry_limit as it was). An edit
-- replaces the job's data too. Not granted.
CREATE OR REPLACE FUNCTION redrive_pgboss.change_jobs(p_rows redrive.source_target[],
                                                      p_action text, p_params jsonb)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_action NOT IN ('requeue', 'edit_and_requeue') THEN
        RAISE EXCEPTION 'pg-boss jobs change only on a requeue, not on %', p_action
              USING ERRCODE = 'feature_not_supported';
    END IF;
    PERFORM redrive_pgboss.queue_retry_jobs(
        (SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.job_ref, 'name', s.queue)
                                   ORDER BY s.id), '[]')
           FROM redrive.source_job s
          WHERE s.id IN (SELECT r.id FROM unnest(p_rows) r) AND s.source = 'pgboss'),
        (p_params ->> 'reset_attempts')::boolean,
        CASE WHEN p_action = 'edit_and_requeue' THEN p_params -> 'payload' END);
END
$$;
REVOKE ALL ON FUNCTION redrive_pgboss.lock_action_targets(jsonb, text),
                       redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)
    FROM PUBLIC;

-- The actions (migration 5's signatures, roles checked by the skeleton: requeue and edit need
-- redrive_oncall, the others redrive_oncall or redrive_support). Each line's release_stuck_jobs
-- refuses: pg-boss fails an active job itself once it expires.
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

-- Edit the job's data and requeue it as above (roles: oncall); the audit entry keeps both.
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

-- Claim or release the claim (roles: oncall, support), on Redrive's row of the job.
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

REVOKE ALL ON FUNCTION
    redrive_pgboss.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
    redrive_pgboss.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text),
    redrive_pgboss.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
    redrive_pgboss.claim_dead_letters(uuid, jsonb, boolean, text, text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    redrive_pgboss.requeue_dead_letters(uuid, jsonb, boolean, text, text, text, uuid, integer),
    redrive_pgboss.edit_and_requeue(uuid, bigint, integer, jsonb, boolean, text, text, text)
    TO redrive_oncall;
GRANT EXECUTE ON FUNCTION
    redrive_pgboss.resolve_dead_letters(uuid, jsonb, text, text, text, text, text, uuid, integer),
    redrive_pgboss.claim_dead_letters(uuid, jsonb, boolean, text, text)
    TO redrive_oncall, redrive_support;

-- ---------------------------------------------------------------------------------------------
-- The capture triggers read the job's values only as the library's own types, whatever the
-- transaction's snapshot (docs/security.md, "The queue's own role").
--
-- A check of pg_cast alone reads it through the transaction's snapshot: in the application's
-- own REPEATABLE READ transaction a cast created (and committed by another session) after that
-- snapshot is invisible to the check, while the planner, which looks casts up in the catalog as
-- it is now, resolved `NEW.state = 'retry'` through it and ran the application's function as the
-- installer. So each capture trigger, before it reads any value of NEW:
--  - checks the type of every column it reads with pg_typeof(NEW.column), which comes from the
--    row itself, not from a catalog read under the snapshot: the built-in type pg-boss gives the
--    column, or the queue schema's own enum job_state; anything else is refused (SQLSTATE 55000,
--    naming the column and its type), since a column of the application's type is converted
--    through the application's casts;
--  - compares the enum job_state without operator resolution: pg_catalog.enum_eq has one
--    candidate, takes the enum itself (polymorphic, exact) and considers no cast, so no cast
--    from job_state is ever looked for; values of the built-in types are compared with the
--    built-in operators, which no cast of the application's can replace (a cast between two
--    built-in types needs a superuser);
--  - checks pg_cast too, which refuses at once in READ COMMITTED.

-- Refuses (SQLSTATE 55000) when a column of `p_table` that a capture trigger reads has another
-- type than the one the library gives it. `p_columns`, `p_types` (pg_typeof of the row's value)
-- and `p_expected` are parallel arrays. Called only by the capture triggers.
CREATE FUNCTION redrive_pgboss.refuse_retyped_columns(p_table pg_catalog.regclass,
                                                      p_columns text[],
                                                      p_types pg_catalog.regtype[],
                                                      p_expected pg_catalog.regtype[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    FOR i IN 1 .. pg_catalog.array_length(p_columns, 1) LOOP
        IF p_types[i] IS NULL OR p_types[i] OPERATOR(pg_catalog.<>) p_expected[i] THEN
            RAISE EXCEPTION 'column % of % has type %, not %: Redrive''s capture reads the '
                            'queue''s columns only as the library''s own types', p_columns[i],
                            p_table, p_types[i], p_expected[i]
                  USING ERRCODE = 'object_not_in_prerequisite_state';
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION redrive_pgboss.refuse_retyped_columns(pg_catalog.regclass, text[],
                                                             pg_catalog.regtype[],
                                                             pg_catalog.regtype[]) FROM PUBLIC;
