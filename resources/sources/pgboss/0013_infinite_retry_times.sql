-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive source "pgboss (pg-boss 10.x)", version 13: the capture trigger survives a retry due at
-- 'infinity' or '-infinity' (docs/domain.md, "Times at the ends of the range").
--
-- capture_failure() computed the backoff of a job pg-boss inserts in state 'retry' as
-- start_after - now(). PostgreSQL 15 cannot subtract an infinite timestamp ("cannot subtract
-- infinite timestamps"), so an insert of such a job into pgboss.job failed inside Redrive's
-- trigger: Redrive broke the queue it watches. The backoff is now NULL for a retry due at
-- 'infinity' (it has no finite delay) and 0 for one due at '-infinity' (due at once, as for any
-- start_after already past). The rest of the function is version 8's, its SET search_path and
-- qualified names unchanged (docs/security.md, "The queue's own role").

CREATE OR REPLACE FUNCTION redrive_pgboss.capture_failure() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_id bigint;
    v_message text := redrive_pgboss.error_message(NEW.output);
BEGIN
    INSERT INTO redrive.source_job AS s (source, job_ref, queue, kind, failures, first_failed_at,
                                         last_failed_at)
    VALUES ('pgboss', NEW.id::text, NEW.name, NEW.name, 1, v_now, v_now)
    ON CONFLICT (source, job_ref) DO UPDATE
       SET version = s.version + 1, failures = s.failures + 1, last_failed_at = v_now,
           -- A new failure reopens what an operator had marked resolved.
           resolution = NULL, resolution_note = NULL, resolved_by = NULL, resolved_at = NULL,
           succeeded_at = NULL, updated_at = v_now
     WHERE s.queue = NEW.name
    RETURNING s.id INTO v_id;
    IF v_id IS NULL THEN
        RAISE WARNING 'redrive: pg-boss job % failed in queue %, but Redrive records job % of '
                      'another queue; this failure is not recorded', NEW.id, NEW.name, NEW.id;
        RETURN NULL;
    END IF;
    INSERT INTO redrive.source_attempt (source_job_id, attempt_no, started_at, finished_at,
                                        outcome, error_class, error_code, message, stack_trace,
                                        worker_id, backoff_ms)
    VALUES (v_id, NEW.retry_count + CASE WHEN NEW.started_on IS NULL THEN 0 ELSE 1 END,
            least(coalesce(NEW.started_on, v_now), v_now), v_now, 'failed',
            redrive_pgboss.error_class(NEW.output), redrive_pgboss.error_code(NEW.output),
            v_message, NEW.output ->> 'stack', NULL,
            CASE WHEN NEW.state = 'retry' AND isfinite(NEW.start_after)
                 THEN greatest(0, (extract(epoch FROM (NEW.start_after - now())) * 1000)::bigint)
                 -- Due since -infinity is due at once; due at infinity has no finite backoff.
                 WHEN NEW.state = 'retry' AND NEW.start_after = '-infinity' THEN 0
            END);
    RETURN NULL;
END
$$;

UPDATE redrive.source SET adapter_version = 13 WHERE name = 'pgboss';
