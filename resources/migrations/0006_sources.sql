-- Redrive native schema, version 6: job queues as sources (issue 7). A source is a schema that
-- implements the read contract (migration 4) and the action functions (migration 5) over one job
-- queue's own tables; `redrive install-source` installs one (resources/sources/<queue>/). What
-- the sources share lives here: the list of installed sources, the dead-letter ids of their jobs
-- with Redrive's own state of them (claim, resolution, version), and the attempts captured from
-- the queues, which keep no history themselves. Audit log, action ids and roles stay those of
-- migrations 3 and 5.

-- The installed sources. The native schema is one; the console lists them for the operator to
-- pick, and connects with search_path "<schema_name>, redrive".
CREATE TABLE redrive.source (
    name              text        PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9-]*$'),
    schema_name       text        NOT NULL UNIQUE,
    label             text        NOT NULL,
    -- The queue's own schema (pgboss, graphile_worker); NULL for the native source.
    queue_schema      text,
    -- Attempts before this moment were not captured: the queue kept at most its last error.
    history_starts_at timestamptz,
    -- Extra actions the source implements beyond the read contract, e.g. 'release_stuck'.
    capabilities      text[]      NOT NULL DEFAULT '{}',
    adapter_version   integer,
    installed_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    installed_by      text        NOT NULL DEFAULT session_user
);
COMMENT ON TABLE redrive.source IS
    'Installed sources (issue 7): the console connects with search_path "<schema_name>, redrive"';
INSERT INTO redrive.source (name, schema_name, label) VALUES ('native', 'redrive', 'Redrive');

-- One row per queue job Redrive has seen fail (or acted on), keyed by the queue's own job id
-- (job_ref, as text: pg-boss uses uuid, graphile-worker bigint). Its id is the dead letter's id
-- in the source's read contract, drawn from the native dead letters' sequence (or, for queues
-- with bigint ids, derived from them above 2^62), so that ids never collide across sources and an
-- audit entry's {"type": "dead_letter", "id": n} names exactly one dead letter.
CREATE TABLE redrive.source_job (
    id              bigint      PRIMARY KEY DEFAULT nextval('redrive.dead_letter_id_seq'),
    source          text        NOT NULL REFERENCES redrive.source (name),
    job_ref         text        NOT NULL,
    queue           text        NOT NULL,
    kind            text        NOT NULL,
    -- Bumped on every captured failure and every Redrive action: optimistic locking.
    version         integer     NOT NULL DEFAULT 1,
    failures        integer     NOT NULL DEFAULT 0,
    first_failed_at timestamptz,
    last_failed_at  timestamptz,
    claimed_by      text,
    claimed_at      timestamptz,
    resolution      text        CHECK (resolution IN ('fixed_by_hand', 'duplicate', 'not_needed')),
    resolution_note text,
    resolved_by     text,
    resolved_at     timestamptz,
    requeued_by     text,
    requeued_at     timestamptz,
    succeeded_at    timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (source, job_ref)
);
COMMENT ON TABLE redrive.source_job IS
    'A queue job as a Redrive dead letter: its id and Redrive''s own state of it (claim, '
    'resolution), keyed by the source''s job id';
CREATE INDEX source_job_resolved_idx ON redrive.source_job (source, resolved_at)
    WHERE resolved_at IS NOT NULL;

-- Attempts captured by the sources' triggers, shaped like redrive.attempt (whose job_id
-- references the native job table). Never updated, never deleted.
CREATE TABLE redrive.source_attempt (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_job_id bigint      NOT NULL REFERENCES redrive.source_job (id),
    attempt_no    integer     NOT NULL CHECK (attempt_no >= 0),
    started_at    timestamptz NOT NULL,
    finished_at   timestamptz,
    outcome       text        NOT NULL
                  CHECK (outcome IN ('succeeded', 'failed', 'conflict', 'abandoned')),
    error_class   text        CHECK (error_class IN ('transient', 'permanent', 'ambiguous')),
    error_code    text,
    message       text,
    stack_trace   text,
    worker_id     text,
    backoff_ms    bigint      CHECK (backoff_ms >= 0),
    -- How the row was captured: 'trigger', or 'install' for the last error a queue still held
    -- when the adapter was installed.
    captured_by   text        NOT NULL DEFAULT 'trigger',
    CHECK (finished_at IS NULL OR finished_at >= started_at)
);
CREATE INDEX source_attempt_job_idx ON redrive.source_attempt (source_job_id, started_at, id);
CREATE INDEX source_attempt_started_idx ON redrive.source_attempt (started_at);

-- The error class of a failure a queue recorded (DESIGN §2): an explicit class the application
-- attached to its error wins; then well-known transient codes; then timeouts, which are
-- ambiguous (the side effect may have happened); then validation-like errors, permanent;
-- anything else is transient (it failed, and nothing says a retry cannot help).
CREATE FUNCTION redrive.classify_source_error(p_message text, p_code text, p_explicit text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN CASE
    WHEN lower(p_explicit) IN ('transient', 'permanent', 'ambiguous') THEN lower(p_explicit)
    WHEN upper(p_code) IN ('ECONNREFUSED', 'ECONNRESET', 'EAI_AGAIN', 'EPIPE', '40001', '40P01',
                           '57P01', '53300', '429', '502', '503', '504') THEN 'transient'
    WHEN p_message ~* '(timed? ?out|timeout|exceeded [0-9]+ ?ms|deadline)' THEN 'ambiguous'
    WHEN p_message ~* '(invalid|validation|declined|not found|unauthori[sz]ed|forbidden)'
        THEN 'permanent'
    ELSE 'transient' END;

-- Releasing jobs that a dead worker still holds is an action only some sources need
-- (graphile-worker keeps such jobs locked for four hours); the native worker reclaims expired
-- leases itself. The native schema implements the signature so the statement exists everywhere.
CREATE FUNCTION redrive.release_stuck_jobs(p_action_id uuid, p_targets jsonb, p_reason text,
                                           p_ticket text DEFAULT NULL,
                                           p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_oncall', 'redrive_support']);
    RAISE EXCEPTION 'this source has no stuck jobs to release'
          USING ERRCODE = 'feature_not_supported',
                HINT = 'Redrive''s own worker reclaims expired leases by itself.';
END
$$;

GRANT SELECT ON redrive.source, redrive.source_job, redrive.source_attempt
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
REVOKE ALL ON FUNCTION redrive.release_stuck_jobs(uuid, jsonb, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.release_stuck_jobs(uuid, jsonb, text, text, text)
    TO redrive_oncall, redrive_support;
GRANT EXECUTE ON FUNCTION redrive.classify_source_error(text, text, text)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
