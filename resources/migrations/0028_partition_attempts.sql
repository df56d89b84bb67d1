-- Attempts are range-partitioned by month on started_at (docs/architecture.md, "Partitions"):
-- the table only grows, and a case view or the overview reads one job's or one period's months,
-- never the whole history. This migration converts a database that already holds attempts: a
-- new partitioned redrive.attempt takes every row in id order with its id, the identity
-- continues where it stood, and the grants, triggers, indexes and the views reading attempts
-- carry over. Month boundaries are midnight UTC on the first of the month.

-- ---------------------------------------------------------------------------------------------
-- Months as partitions. One partition per month, named <table>_YYYY_MM, plus <table>_default for
-- a row no month holds (a clock far off, or maintenance not run). Creating a month whose rows
-- already sit in the default partition moves them there first; rows moved between partitions
-- fire no statement trigger of the parent, so the rollups count them once. Audit entries are
-- never moved (nor deleted): such a month of the audit log stays in its default partition.
CREATE FUNCTION redrive.ensure_month_partition(p_table text, p_column text, p_month timestamptz)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_from timestamptz := date_trunc('month', p_month, 'UTC');
    v_to timestamptz := (date_trunc('month', p_month, 'UTC') AT TIME ZONE 'UTC'
                         + interval '1 month') AT TIME ZONE 'UTC';
    v_name text := p_table || '_' || to_char(date_trunc('month', p_month, 'UTC') AT TIME ZONE 'UTC',
                                             'YYYY_MM');
    v_waiting boolean;
    v_grant record;
BEGIN
    IF p_table NOT IN ('attempt', 'audit_log') THEN
        RAISE EXCEPTION 'redrive.% is not partitioned by month', p_table
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF to_regclass('redrive.' || quote_ident(v_name)) IS NOT NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM redrive.%I WHERE %I >= $1 AND %I < $2)',
                   p_table || '_default', p_column, p_column)
       INTO v_waiting USING v_from, v_to;
    IF v_waiting AND p_table = 'audit_log' THEN
        -- Audit entries are never deleted, not even to move them: they stay in the default
        -- partition, where every reader still finds them.
        RAISE NOTICE 'redrive.audit_log_default holds entries of %; that month stays there',
                     to_char(v_from AT TIME ZONE 'UTC', 'YYYY-MM');
        RETURN NULL;
    ELSIF v_waiting THEN
        EXECUTE format('CREATE TABLE redrive.%I (LIKE redrive.%I INCLUDING DEFAULTS'
                       ' INCLUDING CONSTRAINTS)', v_name, p_table);
        EXECUTE format('WITH moved AS (DELETE FROM redrive.%I WHERE %I >= $1 AND %I < $2'
                       ' RETURNING *) INSERT INTO redrive.%I SELECT * FROM moved',
                       p_table || '_default', p_column, p_column, v_name)
          USING v_from, v_to;
        EXECUTE format('ALTER TABLE redrive.%I ATTACH PARTITION redrive.%I'
                       ' FOR VALUES FROM (%L) TO (%L)', p_table, v_name, v_from, v_to);
    ELSE
        EXECUTE format('CREATE TABLE redrive.%I PARTITION OF redrive.%I'
                       ' FOR VALUES FROM (%L) TO (%L)', v_name, p_table, v_from, v_to);
    END IF;
    -- Readers of the table may read the month too (exactly what they may on the table: SELECT).
    FOR v_grant IN SELECT a.grantee, a.privilege_type
                     FROM pg_class c, aclexplode(c.relacl) a
                    WHERE c.oid = ('redrive.' || quote_ident(p_table))::regclass
                      AND a.grantee <> c.relowner LOOP
        EXECUTE format('GRANT %s ON redrive.%I TO %s', v_grant.privilege_type, v_name,
                       CASE WHEN v_grant.grantee = 0 THEN 'PUBLIC'
                            ELSE v_grant.grantee::regrole::text END);
    END LOOP;
    IF p_table = 'audit_log' THEN
        -- Row triggers are cloned from the parent; a statement trigger is not, and a TRUNCATE of
        -- the partition itself must be refused as the parent's is.
        EXECUTE format('CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON redrive.%I'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION redrive.audit_log_refuse_change()',
                       v_name);
    END IF;
    RETURN v_name;
END
$$;
COMMENT ON FUNCTION redrive.ensure_month_partition(text, text, timestamptz) IS
    'Creates the partition of redrive.<p_table> for the UTC month holding p_month, moving its rows out of the default partition; returns its name, or NULL when it existed (docs/architecture.md "Partitions")';
REVOKE ALL ON FUNCTION redrive.ensure_month_partition(text, text, timestamptz) FROM PUBLIC;

-- `redrive maintain`: the current month and p_months_ahead after it exist for every partitioned
-- table, and every month whose attempts wait in the default partition (a past month that held
-- none when it was current, or a clock far off) gets its partition with its attempts moved
-- there. Idempotent; returns the partitions it created. Changes nothing an operator acts on
-- (empty months, or rows moved out of the default partition unchanged), so it writes no audit
-- entry. For the schema's owner and redrive_admin.
CREATE FUNCTION redrive.maintain_partitions(p_months_ahead integer DEFAULT 3)
RETURNS SETOF text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_table record;
    v_month integer;
    v_past timestamptz;
    v_created text;
BEGIN
    IF NOT (pg_has_role(session_user, 'redrive_admin', 'MEMBER')
            OR pg_has_role(session_user, (SELECT n.nspowner FROM pg_namespace n
                                           WHERE n.nspname = 'redrive'), 'MEMBER')) THEN
        RAISE EXCEPTION 'permission denied: maintaining partitions needs the role redrive_admin'
              USING ERRCODE = 'insufficient_privilege',
                    HINT = 'Ask an administrator to GRANT the role to your login.';
    END IF;
    IF p_months_ahead IS NULL OR p_months_ahead < 0 OR p_months_ahead > 120 THEN
        RAISE EXCEPTION 'months ahead must be between 0 and 120' USING ERRCODE = 'check_violation';
    END IF;
    FOR v_table IN
        SELECT c.relname::text AS name, a.attname::text AS key
          FROM pg_partitioned_table p
          JOIN pg_class c ON c.oid = p.partrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0]
         WHERE n.nspname = 'redrive' AND c.relname IN ('attempt', 'audit_log')
         ORDER BY 1
    LOOP
        -- Months whose rows wait in the default partition (attempts only: audit entries are
        -- never moved), then this month and the months ahead.
        IF v_table.name = 'attempt' THEN
            FOR v_past IN SELECT DISTINCT date_trunc('month', a.started_at, 'UTC')
                            FROM redrive.attempt_default a
                           WHERE isfinite(a.started_at) ORDER BY 1 LOOP
                v_created := redrive.ensure_month_partition(v_table.name, v_table.key, v_past);
                IF v_created IS NOT NULL THEN
                    RETURN NEXT v_created;
                END IF;
            END LOOP;
        END IF;
        FOR v_month IN 0 .. p_months_ahead LOOP
            v_created := redrive.ensure_month_partition(
                v_table.name, v_table.key,
                (date_trunc('month', clock_timestamp(), 'UTC') AT TIME ZONE 'UTC'
                 + make_interval(months => v_month)) AT TIME ZONE 'UTC');
            IF v_created IS NOT NULL THEN
                RETURN NEXT v_created;
            END IF;
        END LOOP;
    END LOOP;
END
$$;
COMMENT ON FUNCTION redrive.maintain_partitions(integer) IS
    'redrive maintain: creates the partitions of this UTC month and the next p_months_ahead months (0..120) of the partitioned tables, and of each month with attempts in the default partition; returns the names created. Owner or redrive_admin (docs/architecture.md "Partitions")';
REVOKE ALL ON FUNCTION redrive.maintain_partitions(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.maintain_partitions(integer) TO redrive_admin;

-- ---------------------------------------------------------------------------------------------
-- The conversion. No attempt is written meanwhile.
LOCK TABLE redrive.attempt IN ACCESS EXCLUSIVE MODE;

-- The views that read attempts (Redrive's and any a site added), to point them at the new table
-- with the same definition, options and grants.
CREATE TEMPORARY TABLE attempt_dependent_view ON COMMIT DROP AS
SELECT v.oid::regclass::text AS name, pg_get_viewdef(v.oid) AS definition,
       array_to_string(v.reloptions, ', ') AS options
  FROM pg_class v
 WHERE v.relkind = 'v'
   AND v.oid IN (SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
                  WHERE d.classid = 'pg_rewrite'::regclass
                    AND d.refobjid = 'redrive.attempt'::regclass);
CREATE TEMPORARY TABLE attempt_grant ON COMMIT DROP AS
SELECT a.grantee, a.privilege_type, a.is_grantable
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.oid = 'redrive.attempt'::regclass AND a.grantee <> c.relowner;

ALTER TABLE redrive.attempt RENAME TO attempt_unpartitioned;
ALTER INDEX redrive.attempt_pkey RENAME TO attempt_unpartitioned_pkey;
ALTER INDEX redrive.attempt_job_idx RENAME TO attempt_unpartitioned_job_idx;
ALTER INDEX redrive.attempt_started_idx RENAME TO attempt_unpartitioned_started_idx;
ALTER SEQUENCE redrive.attempt_id_seq RENAME TO attempt_unpartitioned_id_seq;

-- The same columns and checks as migration 1; the primary key includes the partition key, as
-- PostgreSQL requires (an id is still unique: the identity never repeats).
CREATE TABLE redrive.attempt (
    id            bigint GENERATED ALWAYS AS IDENTITY,
    job_id        bigint      NOT NULL REFERENCES redrive.job (id),
    attempt_no    integer     NOT NULL CHECK (attempt_no > 0),
    started_at    timestamptz NOT NULL,
    finished_at   timestamptz,
    outcome       text        NOT NULL
                  CHECK (outcome IN ('succeeded', 'failed', 'conflict', 'abandoned')),
    error_class   text        CHECK (error_class IN ('transient', 'permanent', 'ambiguous')),
    error_code    text,
    message       text,
    stack_trace   text,
    worker_id     text,
    -- The delay chosen before the next attempt (NULL when there is none), in milliseconds.
    backoff_ms    bigint      CHECK (backoff_ms >= 0),
    PRIMARY KEY (id, started_at),
    CHECK (finished_at IS NULL OR finished_at >= started_at),
    CHECK (outcome = 'succeeded' OR error_class IS NOT NULL OR outcome = 'abandoned')
) PARTITION BY RANGE (started_at);
COMMENT ON TABLE redrive.attempt IS 'One execution of a job (DESIGN §2 "Attempt"); never updated after it finished, never deleted; partitioned by UTC month of started_at (docs/architecture.md "Partitions")';
CREATE TABLE redrive.attempt_default PARTITION OF redrive.attempt DEFAULT;
-- The grants first: each month created below gets the same (see ensure_month_partition).
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM pg_temp.attempt_grant LOOP
        EXECUTE format('GRANT %s ON redrive.attempt TO %s%s', r.privilege_type,
                       CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END,
                       CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        EXECUTE format('GRANT %s ON redrive.attempt_default TO %s', r.privilege_type,
                       CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END);
    END LOOP;
END
$$;

-- A month for every month that holds attempts, this one and three ahead.
SELECT redrive.ensure_month_partition('attempt', 'started_at', m)
  FROM (SELECT DISTINCT date_trunc('month', started_at, 'UTC') AS m
          FROM redrive.attempt_unpartitioned
         WHERE isfinite(started_at)
        UNION
        SELECT (date_trunc('month', clock_timestamp(), 'UTC') AT TIME ZONE 'UTC'
                + make_interval(months => g)) AT TIME ZONE 'UTC'
          FROM generate_series(0, 3) g) months
 ORDER BY m;

-- Every row, in id order, with its id; no trigger exists yet, so the rollups (which already
-- count these attempts) and the listeners see nothing.
INSERT INTO redrive.attempt (id, job_id, attempt_no, started_at, finished_at, outcome,
                             error_class, error_code, message, stack_trace, worker_id, backoff_ms)
OVERRIDING SYSTEM VALUE
SELECT id, job_id, attempt_no, started_at, finished_at, outcome, error_class, error_code, message,
       stack_trace, worker_id, backoff_ms
  FROM redrive.attempt_unpartitioned
 ORDER BY id;
SELECT setval(pg_get_serial_sequence('redrive.attempt', 'id'), s.last_value, s.is_called)
  FROM redrive.attempt_unpartitioned_id_seq s;

CREATE INDEX attempt_job_idx ON redrive.attempt (job_id, started_at, id);
CREATE INDEX attempt_started_idx ON redrive.attempt (started_at);

-- The triggers of migrations 13 and 18.
CREATE TRIGGER attempt_changed_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON redrive.attempt
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.notify_changed('redrive_attempt');
CREATE TRIGGER attempt_rollup_insert AFTER INSERT ON redrive.attempt
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.attempt_rollup();
CREATE TRIGGER attempt_rollup_update AFTER UPDATE ON redrive.attempt
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.attempt_rollup();
CREATE TRIGGER attempt_rollup_delete AFTER DELETE ON redrive.attempt
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.attempt_rollup();

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM pg_temp.attempt_dependent_view LOOP
        EXECUTE format('CREATE OR REPLACE VIEW %s%s AS %s', r.name,
                       CASE WHEN r.options <> '' THEN ' WITH (' || r.options || ')' ELSE '' END,
                       r.definition);
    END LOOP;
END
$$;

DROP TABLE redrive.attempt_unpartitioned;
