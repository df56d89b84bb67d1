-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 19: redrive.rebuild_read_rollups() recounts the failure groups'
-- rollup too (migration 14's failure_group_rollup and failure_group_hour), so a bulk load that
-- ran with triggers off (session_replication_role = replica, as `redrive-worker scale` does)
-- leaves every rollup exact after the one rebuild it already calls. Migrations 14 and 18 were
-- written side by side; this joins them. The rest of the function is migration 18's, unchanged.

CREATE OR REPLACE FUNCTION redrive.rebuild_read_rollups() RETURNS void
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
REVOKE ALL ON FUNCTION redrive.rebuild_read_rollups() FROM PUBLIC;
