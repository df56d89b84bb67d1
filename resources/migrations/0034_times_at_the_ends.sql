-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 34: instants at the ends of PostgreSQL's range
-- (docs/domain.md "Times at the ends of the range"). A worker records the times it is given, and
-- timestamptz holds 'infinity', '-infinity' and years from 4713 BC to 294276. Such a time is
-- kept as written; no statement that reads or counts it may fail because of it:
--
-- 1. The overview's buckets (migration 18) count an instant only when it has a minute and an
--    hour bucket: a finite instant before 294000. date_bin() of the last years before
--    PostgreSQL's end of time fails with "interval out of range", so the rollup trigger refused
--    the worker's attempt; now such an instant is left out of the buckets, as ±infinity is.
--    Buckets at ±infinity counted before this migration are removed.
-- 2. The retry history's duration is NULL when either end is infinite, and computed from each
--    end's epoch (numeric), so that a duration across centuries neither fails ("cannot subtract
--    infinite timestamps") nor overflows silently.
-- 3. A month partition is made only for months of years 1 to 294276 before its December; an
--    attempt at ±infinity, BC or in December 294276 stays in the default partition, and
--    `redrive maintain` no longer fails on it (December 294276 ends after the last instant).

-- An instant the overview buckets: finite, and early enough that date_bin() from the epoch in
-- minutes and hours cannot overflow (PostgreSQL's range ends in 294276; 294000 leaves room).
CREATE FUNCTION redrive.is_bucketable(p_at timestamptz) RETURNS boolean
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN p_at IS NOT NULL AND isfinite(p_at) AND p_at < timestamptz '294000-01-01 00:00:00+00';
COMMENT ON FUNCTION redrive.is_bucketable(timestamptz) IS
    'True for an instant the overview''s minute and hour buckets can hold: finite and before 294000 (docs/domain.md "Times at the ends of the range")';

-- Migration 18's function; the WHERE clause now leaves out what no bucket holds.
CREATE OR REPLACE FUNCTION redrive.bucket_rollup_add(p_series text[], p_at timestamptz[],
                                                     p_key text[], p_delta integer[])
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO redrive.bucket_rollup AS r (series, grain_s, bucket, key, n)
    SELECT c.series, g.grain_s,
           date_bin(g.grain_s * interval '1 second', c.at, timestamptz '1970-01-01 00:00:00+00'),
           c.key, sum(c.delta)
      FROM unnest(p_series, p_at, p_key, p_delta) AS c (series, at, key, delta)
     CROSS JOIN (VALUES (60), (3600)) g (grain_s)
     WHERE redrive.is_bucketable(c.at)
     GROUP BY 1, 2, 3, 4
    HAVING sum(c.delta) <> 0
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (series, grain_s, bucket, key) DO UPDATE SET n = r.n + EXCLUDED.n
$$;

DELETE FROM redrive.bucket_rollup WHERE NOT redrive.is_bucketable(bucket);

-- The recount (migration 19's, renamed by migration 29), with the same rule.
CREATE OR REPLACE FUNCTION redrive.rebuild_read_rollup_counts() RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE redrive.attempt, redrive.dead_letter, redrive.reconciliation_mismatch IN SHARE MODE;
    DELETE FROM redrive.bucket_rollup;
    INSERT INTO redrive.bucket_rollup (series, grain_s, bucket, key, n)
    SELECT x.series, g.grain_s,
           date_bin(g.grain_s * interval '1 second', x.at, timestamptz '1970-01-01 00:00:00+00'),
           x.key, count(*)
      FROM (SELECT 'attempt' AS series, a.started_at AS at, a.outcome AS key
              FROM redrive.attempt a
            UNION ALL
            SELECT 'dead', d.dead_at, coalesce(d.error_class, '') FROM redrive.dead_letter d
            UNION ALL
            SELECT 'resolved', d.resolved_at, '' FROM redrive.dead_letter d
             WHERE d.resolved_at IS NOT NULL) x
     CROSS JOIN (VALUES (60), (3600)) g (grain_s)
     WHERE redrive.is_bucketable(x.at)
     GROUP BY 1, 2, 3, 4;
    DELETE FROM redrive.mismatch_kind_count;
    INSERT INTO redrive.mismatch_kind_count (kind, mismatches, open)
    SELECT m.kind, count(*), count(*) FILTER (WHERE m.status = 'open')
      FROM redrive.reconciliation_mismatch m GROUP BY m.kind;
    INSERT INTO redrive.dead_letter_facet (facet, value)
    SELECT 'queue', q.queue FROM (SELECT DISTINCT queue FROM redrive.dead_letter) q
    UNION
    SELECT 'kind', k.kind FROM (SELECT DISTINCT kind FROM redrive.dead_letter) k
    ON CONFLICT DO NOTHING;
    -- The failure groups' rollup (migration 14), recounted the same way; a group whose dead
    -- letters are all gone keeps its row with zero counts; a regression mark is kept.
    INSERT INTO redrive.failure_group_rollup AS r
           (fingerprint, open_count, requeued_count, resolved_count, compensation_pending_count,
            compensating_count, compensated_count, first_dead_at, last_dead_at, resolved_at)
    SELECT d.fingerprint,
           count(*) FILTER (WHERE d.status = 'open'),
           count(*) FILTER (WHERE d.status = 'requeued'),
           count(*) FILTER (WHERE d.status = 'resolved'),
           count(*) FILTER (WHERE d.status = 'compensation_pending'),
           count(*) FILTER (WHERE d.status = 'compensating'),
           count(*) FILTER (WHERE d.status = 'compensated'),
           min(d.dead_at), max(d.dead_at),
           CASE WHEN bool_and(d.status IN ('resolved', 'compensated')) THEN max(d.resolved_at) END
      FROM redrive.dead_letter d
     GROUP BY d.fingerprint
    ON CONFLICT (fingerprint) DO UPDATE
       SET open_count = EXCLUDED.open_count, requeued_count = EXCLUDED.requeued_count,
           resolved_count = EXCLUDED.resolved_count,
           compensation_pending_count = EXCLUDED.compensation_pending_count,
           compensating_count = EXCLUDED.compensating_count,
           compensated_count = EXCLUDED.compensated_count,
           first_dead_at = EXCLUDED.first_dead_at, last_dead_at = EXCLUDED.last_dead_at,
           resolved_at = EXCLUDED.resolved_at;
    UPDATE redrive.failure_group_rollup r
       SET open_count = 0, requeued_count = 0, resolved_count = 0, compensation_pending_count = 0,
           compensating_count = 0, compensated_count = 0
     WHERE NOT EXISTS (SELECT 1 FROM redrive.dead_letter d WHERE d.fingerprint = r.fingerprint);
    DELETE FROM redrive.failure_group_hour;
    INSERT INTO redrive.failure_group_hour (fingerprint, hour, dead_letters)
    SELECT d.fingerprint, date_trunc('hour', d.dead_at, 'UTC'), count(*)
      FROM redrive.dead_letter d
     GROUP BY 1, 2;
END
$$;

-- Migration 29's view; only duration_ms changed.
CREATE OR REPLACE VIEW redrive.attempt_history AS
SELECT d.id AS dead_letter_id, a.id, a.attempt_no, a.started_at, a.finished_at,
       CASE WHEN isfinite(a.started_at) AND isfinite(a.finished_at)
            THEN round((extract(epoch FROM a.finished_at) - extract(epoch FROM a.started_at))
                       * 1000)::bigint END AS duration_ms,
       a.outcome, a.error_class, a.error_code, a.message, a.stack_trace, a.worker_id,
       a.backoff_ms
  FROM redrive.dead_letter d
  JOIN redrive.job j ON j.id = d.job_id
  JOIN redrive.attempt a ON a.job_id = d.job_id
                        AND a.started_at >= j.attempts_from AND a.started_at <= j.attempts_until;

-- Running jobs whose lease expired (migration 15's view): a lease that ran out at -infinity (a
-- worker's clock given as '-infinity') has no number of seconds; the row is still listed.
CREATE OR REPLACE VIEW redrive.expired_lease_list AS
SELECT j.id AS job_id, j.queue, j.kind, j.locked_by AS worker_id, j.attempt, j.max_attempts,
       j.locked_until, j.heartbeat_at, j.idempotency_key, j.updated_at,
       CASE WHEN isfinite(j.locked_until)
            THEN round(extract(epoch FROM clock_timestamp())
                       - extract(epoch FROM j.locked_until))::bigint END AS expired_seconds
  FROM redrive.job j
 WHERE j.state = 'running' AND j.locked_until < clock_timestamp();

-- Migration 28's function, with the months that can have a partition checked first.
CREATE OR REPLACE FUNCTION redrive.ensure_month_partition(p_table text, p_column text, p_month timestamptz)
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_from timestamptz;
    v_to timestamptz;
    v_name text;
    v_waiting boolean;
    v_grant record;
BEGIN
    IF p_table NOT IN ('attempt', 'audit_log') THEN
        RAISE EXCEPTION 'redrive.% is not partitioned by month', p_table
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Only the months of years 1 to 294276 but its December have a partition: +-infinity has no
    -- month, a year BC would take the name of the same year AD, and December 294276 ends after
    -- PostgreSQL's last instant. Their rows stay in the default partition, where every reader
    -- finds them (docs/architecture.md "Partitions").
    IF p_month IS NULL OR NOT isfinite(p_month)
       OR p_month < timestamptz '0001-01-01 00:00:00+00'
       OR p_month >= timestamptz '294276-12-01 00:00:00+00' THEN
        RETURN NULL;
    END IF;
    v_from := date_trunc('month', p_month, 'UTC');
    v_to := (v_from AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC';
    v_name := p_table || '_' || to_char(v_from AT TIME ZONE 'UTC', 'YYYY_MM');
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
