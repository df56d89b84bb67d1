-- SPDX-License-Identifier: GPL-3.0-or-later
-- The payload as received (docs/domain.md#payloads-are-shown-as-they-are): jsonb keeps the last
-- of duplicate keys and reorders members, so a producer that enqueues through
-- enqueue_job_received() also keeps the text it sent, as PostgreSQL's json type (exactly as
-- written, checked to be JSON), next to the jsonb the queries use. The case view shows that text
-- and says when keys were merged.

ALTER TABLE redrive.job ADD COLUMN payload_received json;
COMMENT ON COLUMN redrive.job.payload_received IS
    'The payload text exactly as the producer sent it (duplicate keys and member order kept); payload is the same document as jsonb. NULL when enqueued as jsonb, and cleared when payload changes (an edit).';

-- A changed payload (an edit-and-requeue applied by the worker) no longer matches the text
-- received: drop the text rather than show a payload that is not the one that runs.
CREATE FUNCTION redrive.job_payload_received_follows() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NEW.payload IS DISTINCT FROM OLD.payload
       AND NEW.payload_received::text IS NOT DISTINCT FROM OLD.payload_received::text THEN
        NEW.payload_received := NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER job_payload_received_follows BEFORE UPDATE OF payload ON redrive.job
    FOR EACH ROW EXECUTE FUNCTION redrive.job_payload_received_follows();

-- enqueue_job() with the payload as text: stored as jsonb for queries and as json as received.
CREATE FUNCTION redrive.enqueue_job_received(
    p_queue text, p_kind text, p_payload text, p_idempotency_key text,
    p_entity_id text DEFAULT NULL, p_event_seq bigint DEFAULT NULL,
    p_event_at timestamptz DEFAULT NULL, p_max_attempts integer DEFAULT 8,
    p_run_at timestamptz DEFAULT NULL, p_deadline_ms bigint DEFAULT 3600000,
    p_headers jsonb DEFAULT '{}')
RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id bigint;
BEGIN
    v_id := redrive.enqueue_job(p_queue, p_kind, p_payload::jsonb, p_idempotency_key, p_entity_id,
                                p_event_seq, p_event_at, p_max_attempts, p_run_at, p_deadline_ms,
                                NULL, p_headers);
    UPDATE redrive.job SET payload_received = p_payload::json WHERE id = v_id;
    RETURN v_id;
END
$$;
REVOKE ALL ON FUNCTION redrive.enqueue_job_received(text, text, text, text, text, bigint,
                                                    timestamptz, integer, timestamptz, bigint,
                                                    jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.enqueue_job_received(text, text, text, text, text, bigint,
                                                       timestamptz, integer, timestamptz, bigint,
                                                       jsonb) TO redrive_worker;

-- The payload of a native dead letter as received (NULL when it was enqueued as jsonb), for
-- the console roles that read dead_letter_detail.
CREATE FUNCTION redrive.payload_as_received(p_dead_letter bigint) RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN (SELECT j.payload_received::text
          FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id
         WHERE d.id = p_dead_letter);
REVOKE ALL ON FUNCTION redrive.payload_as_received(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.payload_as_received(bigint)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
