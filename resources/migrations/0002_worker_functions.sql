-- Redrive native schema, version 2: the functions a worker runs jobs through (issue 3).
-- Each is SECURITY DEFINER with a pinned search_path and granted to redrive_worker only, so a
-- worker login needs no table privileges. All times are computed from p_now, which is NULL in
-- production (then the server clock, clock_timestamp()) and an explicit instant when the demo
-- generator replays hours of history in virtual time.

DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'redrive_worker') THEN
        CREATE ROLE redrive_worker NOLOGIN;
    END IF;
END
$roles$;
COMMENT ON ROLE redrive_worker IS 'Redrive: workers that claim and run jobs (not an operator role)';
GRANT USAGE ON SCHEMA redrive TO redrive_worker;
GRANT SELECT ON ALL TABLES IN SCHEMA redrive TO redrive_worker;

-- ---------------------------------------------------------------------------------------------
-- Enqueue a job. Returns its id.
CREATE FUNCTION redrive.enqueue_job(
    p_queue text, p_kind text, p_payload jsonb, p_idempotency_key text,
    p_entity_id text DEFAULT NULL, p_event_seq bigint DEFAULT NULL,
    p_event_at timestamptz DEFAULT NULL, p_max_attempts integer DEFAULT 8,
    p_run_at timestamptz DEFAULT NULL, p_deadline_ms bigint DEFAULT 3600000,
    p_payload_bytes bytea DEFAULT NULL, p_headers jsonb DEFAULT '{}')
RETURNS bigint
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    INSERT INTO redrive.job (queue, kind, payload, payload_bytes, headers, idempotency_key,
                             entity_id, event_seq, event_at, max_attempts, run_at, deadline_at,
                             created_at, updated_at)
    VALUES (p_queue, p_kind, p_payload, p_payload_bytes, coalesce(p_headers, '{}'),
            p_idempotency_key, p_entity_id, p_event_seq, p_event_at, p_max_attempts,
            coalesce(p_run_at, clock_timestamp()),
            coalesce(p_run_at, clock_timestamp()) + p_deadline_ms * interval '1 millisecond',
            coalesce(p_run_at, clock_timestamp()), coalesce(p_run_at, clock_timestamp()))
    RETURNING id;
END;

-- ---------------------------------------------------------------------------------------------
-- Claim up to p_limit due jobs of p_queues with a lease of p_lease_ms. SKIP LOCKED makes two
-- workers take disjoint sets; the attempt counter moves when the attempt starts.
CREATE FUNCTION redrive.claim_jobs(p_worker text, p_queues text[], p_limit integer,
                                   p_lease_ms integer, p_now timestamptz DEFAULT NULL)
RETURNS SETOF redrive.job
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
BEGIN
    RETURN QUERY
    UPDATE redrive.job AS j
       SET state = 'running', attempt = j.attempt + 1, locked_by = p_worker,
           locked_until = v_now + p_lease_ms * interval '1 millisecond', heartbeat_at = v_now,
           updated_at = v_now
     WHERE j.id IN (SELECT id FROM redrive.job
                     WHERE state = 'queued' AND queue = ANY (p_queues) AND run_at <= v_now
                     ORDER BY run_at, id
                     LIMIT p_limit
                       FOR UPDATE SKIP LOCKED)
    RETURNING j.*;
END
$$;

-- Extend the lease of a job this worker still holds (the heartbeat), and of the idempotency key
-- it holds for that job. False when it lost the job.
CREATE FUNCTION redrive.heartbeat_job(p_job bigint, p_worker text, p_lease_ms integer,
                                      p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_until timestamptz := coalesce(p_now, clock_timestamp()) + p_lease_ms * interval '1 millisecond';
BEGIN
    UPDATE redrive.job
       SET locked_until = v_until, heartbeat_at = coalesce(p_now, clock_timestamp())
     WHERE id = p_job AND state = 'running' AND locked_by = p_worker;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE redrive.idempotency_key
       SET locked_until = greatest(locked_until, v_until)
     WHERE job_id = p_job AND locked_by = p_worker AND state = 'processing';
    RETURN true;
END
$$;

-- Defer a claimed job without counting an attempt (the retry budget said not now).
CREATE FUNCTION redrive.defer_job(p_job bigint, p_worker text, p_delay_ms bigint,
                                  p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH touched AS (
        UPDATE redrive.job
           SET state = 'queued', attempt = attempt - 1, locked_by = NULL, locked_until = NULL,
               run_at = coalesce(p_now, clock_timestamp()) + p_delay_ms * interval '1 millisecond',
               updated_at = coalesce(p_now, clock_timestamp())
         WHERE id = p_job AND state = 'running' AND locked_by = p_worker
        RETURNING 1)
    SELECT count(*) = 1 FROM touched;
END;

-- ---------------------------------------------------------------------------------------------
-- Record the end of an attempt and decide the job's next state in the same transaction:
--   p_next = 'succeeded'  the job is done; a requeued dead letter of it becomes resolved
--            'retry'      back to queued, due after p_backoff_ms
--            'dead'       a dead letter (new, or the requeued one back to open) with the full
--                         history, p_dead_reason saying why
-- Returns 'recorded', or 'lost_lease' when the job is no longer this worker's (another worker
-- reclaimed it after the lease expired): then nothing is written.
CREATE FUNCTION redrive.finish_attempt(
    p_job bigint, p_worker text, p_started_at timestamptz, p_finished_at timestamptz,
    p_outcome text, p_error_class text, p_error_code text, p_message text, p_stack_trace text,
    p_next text, p_backoff_ms bigint, p_dead_reason text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_job redrive.job%ROWTYPE;
    v_attempts integer;
BEGIN
    SELECT * INTO v_job FROM redrive.job WHERE id = p_job FOR UPDATE;
    IF NOT FOUND OR v_job.state <> 'running' OR v_job.locked_by IS DISTINCT FROM p_worker THEN
        RETURN 'lost_lease';
    END IF;
    IF p_next NOT IN ('succeeded', 'retry', 'dead') THEN
        RAISE EXCEPTION 'finish_attempt: unknown next state %', p_next USING ERRCODE = '22023';
    END IF;

    INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,
                                 error_class, error_code, message, stack_trace, worker_id,
                                 backoff_ms)
    VALUES (p_job, v_job.attempt, p_started_at, p_finished_at, p_outcome, p_error_class,
            p_error_code, p_message, p_stack_trace, p_worker,
            CASE WHEN p_next = 'retry' THEN p_backoff_ms END);

    IF p_next = 'succeeded' THEN
        UPDATE redrive.job
           SET state = 'succeeded', locked_by = NULL, locked_until = NULL, last_error = NULL,
               updated_at = p_finished_at
         WHERE id = p_job;
        UPDATE redrive.dead_letter
           SET status = 'resolved', resolution = 'succeeded_after_requeue',
               resolved_by = p_worker, resolved_at = p_finished_at
         WHERE job_id = p_job AND status = 'requeued';
    ELSIF p_next = 'retry' THEN
        UPDATE redrive.job
           SET state = 'queued', locked_by = NULL, locked_until = NULL, last_error = p_message,
               run_at = p_finished_at + p_backoff_ms * interval '1 millisecond',
               updated_at = p_finished_at
         WHERE id = p_job;
    ELSE
        UPDATE redrive.job
           SET state = 'dead', locked_by = NULL, locked_until = NULL, last_error = p_message,
               updated_at = p_finished_at
         WHERE id = p_job;
        SELECT count(*) INTO v_attempts FROM redrive.attempt WHERE job_id = p_job;
        INSERT INTO redrive.dead_letter AS d
               (job_id, queue, kind, reason, error_class, error_code, last_error, stack_trace,
                attempts, idempotency_key, dead_at, fingerprint)
        VALUES (p_job, v_job.queue, v_job.kind, coalesce(p_dead_reason, 'exhausted'),
                p_error_class, p_error_code, p_message, p_stack_trace, v_attempts,
                v_job.idempotency_key, p_finished_at, '')
        ON CONFLICT (job_id) DO UPDATE
           SET status = 'open', reason = EXCLUDED.reason, error_class = EXCLUDED.error_class,
               error_code = EXCLUDED.error_code, last_error = EXCLUDED.last_error,
               stack_trace = EXCLUDED.stack_trace, attempts = EXCLUDED.attempts,
               dead_at = EXCLUDED.dead_at, resolution = NULL, resolved_by = NULL,
               resolved_at = NULL;
    END IF;
    RETURN 'recorded';
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Reclaim jobs whose lease expired (their worker died or hung): the lost attempt is recorded as
-- abandoned with error class ambiguous (its side effect may have happened), and the job is
-- retried once more if it has attempts left, else dead-lettered. Returns the jobs reclaimed.
CREATE FUNCTION redrive.reclaim_expired_leases(p_worker text, p_now timestamptz DEFAULT NULL)
RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
    v_job redrive.job%ROWTYPE;
    v_message text;
BEGIN
    FOR v_job IN
        SELECT * FROM redrive.job
         WHERE state = 'running' AND locked_until < v_now
         ORDER BY locked_until
           FOR UPDATE SKIP LOCKED
    LOOP
        v_message := format('lease of worker %s expired at %s without a result',
                            v_job.locked_by, v_job.locked_until);
        -- Record as the worker that lost it, then decide as this worker.
        UPDATE redrive.job SET locked_by = p_worker WHERE id = v_job.id;
        PERFORM redrive.finish_attempt(
            v_job.id, p_worker, coalesce(v_job.heartbeat_at, v_job.locked_until),
            greatest(v_now, coalesce(v_job.heartbeat_at, v_job.locked_until)), 'abandoned',
            'ambiguous', 'lease_expired', v_message, NULL,
            CASE WHEN v_job.attempt >= v_job.max_attempts THEN 'dead' ELSE 'retry' END,
            0, 'ambiguous');
        UPDATE redrive.attempt SET worker_id = v_job.locked_by
         WHERE id = (SELECT max(id) FROM redrive.attempt WHERE job_id = v_job.id);
        RETURN NEXT v_job.id;
    END LOOP;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Idempotency keys (DESIGN §2). begin_idempotent says what the caller may do:
--   proceed   first time (or the last try failed): run the side effect
--   takeover  an earlier holder's lease expired mid-way: run it, knowing it may have happened
--   replay    done before: return `result`, run nothing
--   conflict  another holder is processing right now: retry later
--   mismatch  same key, different request: never replay, never run
CREATE FUNCTION redrive.begin_idempotent(p_scope text, p_key text, p_request_hash text,
                                         p_job bigint, p_worker text, p_lease_ms integer,
                                         p_now timestamptz DEFAULT NULL,
                                         OUT verdict text, OUT result jsonb)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
    v_lease timestamptz := v_now + p_lease_ms * interval '1 millisecond';
    v_rec redrive.idempotency_key%ROWTYPE;
BEGIN
    INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id, locked_by,
                                         locked_until, created_at, updated_at, expires_at)
    VALUES (p_scope, p_key, p_request_hash, 'processing', p_job, p_worker, v_lease, v_now,
            v_now, v_now + interval '7 days')
    ON CONFLICT (scope, key) DO NOTHING;
    IF FOUND THEN
        verdict := 'proceed';
        RETURN;
    END IF;

    SELECT * INTO v_rec FROM redrive.idempotency_key
     WHERE scope = p_scope AND key = p_key FOR UPDATE;
    IF v_rec.request_hash <> p_request_hash THEN
        UPDATE redrive.idempotency_key
           SET conflicting_hash = p_request_hash, conflict_count = conflict_count + 1,
               last_conflict_at = v_now, version = version + 1
         WHERE scope = p_scope AND key = p_key;
        verdict := 'mismatch';
    ELSIF v_rec.state = 'done' THEN
        verdict := 'replay';
        result := v_rec.result;
    ELSIF v_rec.state = 'processing' AND v_rec.locked_until > v_now THEN
        verdict := 'conflict';
    ELSE
        verdict := CASE WHEN v_rec.state = 'processing' THEN 'takeover' ELSE 'proceed' END;
        UPDATE redrive.idempotency_key
           SET state = 'processing', locked_by = p_worker, locked_until = v_lease,
               job_id = coalesce(p_job, job_id), updated_at = v_now, version = version + 1
         WHERE scope = p_scope AND key = p_key;
    END IF;
END
$$;

-- Finish a key this worker holds: 'done' with the result to replay, or 'failed' so that a retry
-- may proceed. Returns false when the worker no longer holds it.
CREATE FUNCTION redrive.complete_idempotent(p_scope text, p_key text, p_worker text,
                                            p_state text, p_result jsonb, p_error text,
                                            p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH touched AS (
        UPDATE redrive.idempotency_key
           SET state = p_state, result = CASE WHEN p_state = 'done' THEN p_result END,
               error_message = p_error, locked_by = NULL, locked_until = NULL,
               updated_at = coalesce(p_now, clock_timestamp()), version = version + 1
         WHERE scope = p_scope AND key = p_key AND locked_by = p_worker
           AND state = 'processing' AND p_state IN ('done', 'failed')
        RETURNING 1)
    SELECT count(*) = 1 FROM touched;
END;

-- ---------------------------------------------------------------------------------------------
-- Outbox relay: claim pending commands (SKIP LOCKED), then mark each done or failed.
CREATE FUNCTION redrive.claim_outbox(p_worker text, p_limit integer, p_lease_ms integer,
                                     p_now timestamptz DEFAULT NULL)
RETURNS SETOF redrive.outbox
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
BEGIN
    RETURN QUERY
    UPDATE redrive.outbox AS o
       SET status = 'processing', attempts = o.attempts + 1,
           locked_until = v_now + p_lease_ms * interval '1 millisecond'
     WHERE o.id IN (SELECT id FROM redrive.outbox
                     WHERE available_at <= v_now
                       AND (status = 'pending'
                            OR (status = 'processing' AND locked_until < v_now))
                     ORDER BY available_at, id
                     LIMIT p_limit
                       FOR UPDATE SKIP LOCKED)
    RETURNING o.*;
END
$$;

CREATE FUNCTION redrive.finish_outbox(p_id bigint, p_ok boolean, p_error text,
                                      p_retry_ms bigint DEFAULT 5000,
                                      p_now timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    UPDATE redrive.outbox
       SET status = CASE WHEN p_ok THEN 'done' WHEN attempts >= 10 THEN 'failed' ELSE 'pending' END,
           last_error = p_error, locked_until = NULL,
           processed_at = CASE WHEN p_ok THEN coalesce(p_now, clock_timestamp()) END,
           available_at = coalesce(p_now, clock_timestamp()) + p_retry_ms * interval '1 millisecond'
     WHERE id = p_id;
END;

-- Apply a requeue command: the job goes back to the queue with its history kept; the attempt
-- counter is reset or kept as the command says. Refused (false) while the job is leased.
CREATE FUNCTION redrive.apply_requeue(p_job bigint, p_reset_attempts boolean,
                                      p_payload jsonb DEFAULT NULL,
                                      p_now timestamptz DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := coalesce(p_now, clock_timestamp());
BEGIN
    UPDATE redrive.job
       SET state = 'queued', run_at = v_now,
           attempt = CASE WHEN p_reset_attempts THEN 0 ELSE attempt END,
           max_attempts = CASE WHEN p_reset_attempts THEN max_attempts
                               ELSE greatest(max_attempts, attempt + 1) END,
           deadline_at = v_now + (coalesce(deadline_at, v_now) - created_at),
           payload = coalesce(p_payload, payload), updated_at = v_now
     WHERE id = p_job AND state = 'dead';
    RETURN FOUND;
END
$$;

-- ---------------------------------------------------------------------------------------------
REVOKE ALL ON FUNCTION
    redrive.enqueue_job(text, text, jsonb, text, text, bigint, timestamptz, integer, timestamptz,
                        bigint, bytea, jsonb),
    redrive.claim_jobs(text, text[], integer, integer, timestamptz),
    redrive.heartbeat_job(bigint, text, integer, timestamptz),
    redrive.defer_job(bigint, text, bigint, timestamptz),
    redrive.finish_attempt(bigint, text, timestamptz, timestamptz, text, text, text, text, text,
                           text, bigint, text),
    redrive.reclaim_expired_leases(text, timestamptz),
    redrive.begin_idempotent(text, text, text, bigint, text, integer, timestamptz),
    redrive.complete_idempotent(text, text, text, text, jsonb, text, timestamptz),
    redrive.claim_outbox(text, integer, integer, timestamptz),
    redrive.finish_outbox(bigint, boolean, text, bigint, timestamptz),
    redrive.apply_requeue(bigint, boolean, jsonb, timestamptz)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    redrive.enqueue_job(text, text, jsonb, text, text, bigint, timestamptz, integer, timestamptz,
                        bigint, bytea, jsonb),
    redrive.claim_jobs(text, text[], integer, integer, timestamptz),
    redrive.heartbeat_job(bigint, text, integer, timestamptz),
    redrive.defer_job(bigint, text, bigint, timestamptz),
    redrive.finish_attempt(bigint, text, timestamptz, timestamptz, text, text, text, text, text,
                           text, bigint, text),
    redrive.reclaim_expired_leases(text, timestamptz),
    redrive.begin_idempotent(text, text, text, bigint, text, integer, timestamptz),
    redrive.complete_idempotent(text, text, text, text, jsonb, text, timestamptz),
    redrive.claim_outbox(text, integer, integer, timestamptz),
    redrive.finish_outbox(bigint, boolean, text, bigint, timestamptz),
    redrive.apply_requeue(bigint, boolean, jsonb, timestamptz)
TO redrive_worker;
