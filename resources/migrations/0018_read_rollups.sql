-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 18: reads that cost what they are worth at a million dead
-- letters (docs/architecture.md#reads-at-scale).
--
-- 1. Views used in lookups stay mergeable: a view whose select list calls a volatile function
--    (clock_timestamp()) is never merged into the query that uses it, so a lookup by key through
--    it scans every row. "Stuck" is computed against now() (the statement's transaction start;
--    the console runs each read in a transaction of its own).
-- 2. Rollups kept exact by the same transactions that change the rows, with statement-level
--    triggers over transition tables (one trigger call and one grouped upsert per statement,
--    never one per row): the overview's time buckets, the mismatch counts by kind, and the
--    queues and kinds the filter bar offers.

CREATE OR REPLACE VIEW redrive.idempotency_key_list AS
SELECT k.scope, k.key, k.request_hash, k.state, k.job_id::text AS job_ref, k.locked_by,
       k.locked_until, k.result::text AS result_text, k.error_message, k.conflicting_hash,
       k.conflict_count, k.last_conflict_at, k.created_at, k.updated_at, k.expires_at,
       k.version,
       (k.state = 'processing' AND k.locked_until < now()) AS stuck
  FROM redrive.idempotency_key k;

-- ---------------------------------------------------------------------------------------------
-- Time buckets of the overview: per minute and per hour (UTC, aligned to the epoch), per series
-- and key. Series 'attempt' counts attempts by started_at with key = outcome; 'dead' counts dead
-- letters by dead_at with key = error class ('' when none); 'resolved' counts dead letters by
-- resolved_at with key ''. A bucket whose rows went away keeps n = 0.
CREATE TABLE redrive.bucket_rollup (
    series  text        NOT NULL CHECK (series IN ('attempt', 'dead', 'resolved')),
    grain_s integer     NOT NULL CHECK (grain_s IN (60, 3600)),
    bucket  timestamptz NOT NULL,
    key     text        NOT NULL,
    n       bigint      NOT NULL,
    PRIMARY KEY (series, grain_s, bucket, key)
);
COMMENT ON TABLE redrive.bucket_rollup IS
    'Overview time buckets (minute and hour, UTC), kept by statement-level triggers on attempt '
    'and dead_letter; redrive.rebuild_read_rollups() recounts them';

-- Mismatches per kind, all and still open.
CREATE TABLE redrive.mismatch_kind_count (
    kind       text   PRIMARY KEY,
    mismatches bigint NOT NULL,
    open       bigint NOT NULL
);
COMMENT ON TABLE redrive.mismatch_kind_count IS
    'Reconciliation mismatches per kind (all, open), kept by statement-level triggers';

-- The queues and kinds that ever had a dead letter (the filter bar's menus). Insert-only and
-- ON CONFLICT DO NOTHING, so concurrent dead letters never wait for each other here; a queue
-- whose dead letters are all gone stays offered.
CREATE TABLE redrive.dead_letter_facet (
    facet text NOT NULL CHECK (facet IN ('queue', 'kind')),
    value text NOT NULL,
    PRIMARY KEY (facet, value)
);
COMMENT ON TABLE redrive.dead_letter_facet IS
    'Queues and kinds that have had dead letters, kept by a statement-level insert trigger';

-- Adds a set of (series, at, key, delta) contributions to both grains of bucket_rollup. Sorted
-- by key so that concurrent statements lock the rows they share in the same order.
CREATE FUNCTION redrive.bucket_rollup_add(p_series text[], p_at timestamptz[], p_key text[],
                                          p_delta integer[])
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
     WHERE c.at IS NOT NULL
     GROUP BY 1, 2, 3, 4
    HAVING sum(c.delta) <> 0
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (series, grain_s, bucket, key) DO UPDATE SET n = r.n + EXCLUDED.n
$$;
REVOKE ALL ON FUNCTION redrive.bucket_rollup_add(text[], timestamptz[], text[], integer[])
    FROM PUBLIC;

CREATE FUNCTION redrive.attempt_rollup() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s text[];
    t timestamptz[];
    k text[];
    d integer[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg('attempt'::text), array_agg(n.started_at), array_agg(n.outcome),
               array_agg(1)
          INTO s, t, k, d FROM new_rows n;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg('attempt'::text), array_agg(x.started_at), array_agg(x.outcome),
               array_agg(x.delta)
          INTO s, t, k, d
          FROM (SELECT n.started_at, n.outcome, 1 AS delta FROM new_rows n
                UNION ALL
                SELECT o.started_at, o.outcome, -1 FROM old_rows o) x;
    ELSE
        SELECT array_agg('attempt'::text), array_agg(o.started_at), array_agg(o.outcome),
               array_agg(-1)
          INTO s, t, k, d FROM old_rows o;
    END IF;
    IF s IS NOT NULL THEN
        PERFORM redrive.bucket_rollup_add(s, t, k, d);
    END IF;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION redrive.attempt_rollup() FROM PUBLIC;

CREATE TRIGGER attempt_rollup_insert AFTER INSERT ON redrive.attempt
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.attempt_rollup();
CREATE TRIGGER attempt_rollup_update AFTER UPDATE ON redrive.attempt
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.attempt_rollup();
CREATE TRIGGER attempt_rollup_delete AFTER DELETE ON redrive.attempt
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.attempt_rollup();

-- Dead letters: the 'dead' and 'resolved' series, and the facets of new dead letters. An update
-- that changes none of dead_at, error_class, resolved_at adds nothing (its deltas cancel).
CREATE FUNCTION redrive.dead_letter_rollup() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s text[];
    t timestamptz[];
    k text[];
    d integer[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(x.series), array_agg(x.at), array_agg(x.key), array_agg(1)
          INTO s, t, k, d
          FROM (SELECT 'dead' AS series, n.dead_at AS at, coalesce(n.error_class, '') AS key
                  FROM new_rows n
                UNION ALL
                SELECT 'resolved', n.resolved_at, '' FROM new_rows n
                 WHERE n.resolved_at IS NOT NULL) x;
        INSERT INTO redrive.dead_letter_facet (facet, value)
        SELECT f.facet, f.value
          FROM (SELECT 'queue' AS facet, n.queue AS value FROM new_rows n
                UNION
                SELECT 'kind', n.kind FROM new_rows n) f
         ORDER BY 1, 2
        ON CONFLICT DO NOTHING;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(x.series), array_agg(x.at), array_agg(x.key), array_agg(x.delta)
          INTO s, t, k, d
          FROM (SELECT 'dead' AS series, n.dead_at AS at, coalesce(n.error_class, '') AS key,
                       1 AS delta
                  FROM new_rows n
                UNION ALL
                SELECT 'resolved', n.resolved_at, '', 1 FROM new_rows n
                 WHERE n.resolved_at IS NOT NULL
                UNION ALL
                SELECT 'dead', o.dead_at, coalesce(o.error_class, ''), -1 FROM old_rows o
                UNION ALL
                SELECT 'resolved', o.resolved_at, '', -1 FROM old_rows o
                 WHERE o.resolved_at IS NOT NULL) x;
    ELSE
        SELECT array_agg(x.series), array_agg(x.at), array_agg(x.key), array_agg(-1)
          INTO s, t, k, d
          FROM (SELECT 'dead' AS series, o.dead_at AS at, coalesce(o.error_class, '') AS key
                  FROM old_rows o
                UNION ALL
                SELECT 'resolved', o.resolved_at, '' FROM old_rows o
                 WHERE o.resolved_at IS NOT NULL) x;
    END IF;
    IF s IS NOT NULL THEN
        PERFORM redrive.bucket_rollup_add(s, t, k, d);
    END IF;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION redrive.dead_letter_rollup() FROM PUBLIC;

CREATE TRIGGER dead_letter_rollup_insert AFTER INSERT ON redrive.dead_letter
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.dead_letter_rollup();
CREATE TRIGGER dead_letter_rollup_update AFTER UPDATE ON redrive.dead_letter
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.dead_letter_rollup();
CREATE TRIGGER dead_letter_rollup_delete AFTER DELETE ON redrive.dead_letter
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.dead_letter_rollup();

CREATE FUNCTION redrive.mismatch_rollup() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_kind text[];
    v_status text[];
    v_delta integer[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(n.kind), array_agg(n.status), array_agg(1)
          INTO v_kind, v_status, v_delta FROM new_rows n;
    ELSIF TG_OP = 'UPDATE' THEN
        SELECT array_agg(x.kind), array_agg(x.status), array_agg(x.delta)
          INTO v_kind, v_status, v_delta
          FROM (SELECT n.kind, n.status, 1 AS delta FROM new_rows n
                UNION ALL
                SELECT o.kind, o.status, -1 FROM old_rows o) x;
    ELSE
        SELECT array_agg(o.kind), array_agg(o.status), array_agg(-1)
          INTO v_kind, v_status, v_delta FROM old_rows o;
    END IF;
    INSERT INTO redrive.mismatch_kind_count AS c (kind, mismatches, open)
    SELECT x.kind, sum(x.delta), sum(CASE WHEN x.status = 'open' THEN x.delta ELSE 0 END)
      FROM unnest(v_kind, v_status, v_delta) AS x (kind, status, delta)
     GROUP BY x.kind
    HAVING sum(x.delta) <> 0 OR sum(CASE WHEN x.status = 'open' THEN x.delta ELSE 0 END) <> 0
     ORDER BY x.kind
    ON CONFLICT (kind) DO UPDATE
       SET mismatches = c.mismatches + EXCLUDED.mismatches, open = c.open + EXCLUDED.open;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION redrive.mismatch_rollup() FROM PUBLIC;

CREATE TRIGGER mismatch_rollup_insert AFTER INSERT ON redrive.reconciliation_mismatch
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.mismatch_rollup();
CREATE TRIGGER mismatch_rollup_update AFTER UPDATE ON redrive.reconciliation_mismatch
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.mismatch_rollup();
CREATE TRIGGER mismatch_rollup_delete AFTER DELETE ON redrive.reconciliation_mismatch
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.mismatch_rollup();

-- Recounts every rollup from the base tables: after a bulk load that ran with triggers off
-- (session_replication_role = replica, as the scale world does), or to check them. Owner and
-- superusers only; takes a SHARE lock on the base tables so nothing changes meanwhile.
CREATE FUNCTION redrive.rebuild_read_rollups() RETURNS void
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
END
$$;
REVOKE ALL ON FUNCTION redrive.rebuild_read_rollups() FROM PUBLIC;

SELECT redrive.rebuild_read_rollups();

-- ---------------------------------------------------------------------------------------------
-- The read contract's additions (a source adapter defines the same names over its own tables).

-- The two views below describe the native source only. A console reading another source (whose
-- schema comes first on its search_path, so current_schema() names it) whose adapter predates
-- them finds these and gets no rows rather than the native source's.

-- The queues and kinds the filter bar offers: facet 'queue' or 'kind', and the value.
CREATE VIEW redrive.dead_letter_facet_list AS
SELECT f.facet, f.value FROM redrive.dead_letter_facet f WHERE current_schema() = 'redrive';

-- Overview time buckets: series, grain_s (60 or 3600), bucket start (UTC, epoch-aligned), key,
-- and the count n in that bucket.
CREATE VIEW redrive.bucket_rollup_list AS
SELECT r.series, r.grain_s, r.bucket, r.key, r.n
  FROM redrive.bucket_rollup r
 WHERE r.n <> 0 AND current_schema() = 'redrive';

-- Mismatches per kind (native only: reconciliation is Redrive's own).
CREATE VIEW redrive.mismatch_count_list AS
SELECT c.kind, c.mismatches, c.open FROM redrive.mismatch_kind_count c WHERE c.mismatches <> 0;

GRANT SELECT ON redrive.dead_letter_facet_list, redrive.bucket_rollup_list,
                redrive.mismatch_count_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_worker;
-- Every Redrive role may read everything (docs/security.md#roles); only the triggers write.
GRANT SELECT ON redrive.bucket_rollup, redrive.mismatch_kind_count, redrive.dead_letter_facet
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
