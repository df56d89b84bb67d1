-- SPDX-License-Identifier: GPL-3.0-or-later
-- The adapter, version 6: the read contract's additions of Redrive's migration 18
-- (docs/architecture.md#reads-at-scale). The queue's tables carry no rollups of Redrive's, so
-- both views are computed from the adapter's own views when they are read; they keep the
-- contract's columns so that the console's statements read every source alike.

-- The queues and kinds the filter bar offers.
CREATE VIEW redrive_pgboss.dead_letter_facet_list AS
SELECT 'queue'::text AS facet, q.queue AS value
  FROM (SELECT DISTINCT d.queue FROM redrive_pgboss.dead_letter_list d) q
UNION ALL
SELECT 'kind', k.kind FROM (SELECT DISTINCT d.kind FROM redrive_pgboss.dead_letter_list d) k;

-- Overview time buckets per minute and per hour (UTC, aligned to the epoch): series 'attempt'
-- (key: outcome), 'dead' (key: error class or ''), 'resolved' (key '').
CREATE VIEW redrive_pgboss.bucket_rollup_list AS
SELECT x.series, g.grain_s,
       date_bin(g.grain_s * interval '1 second', x.at, timestamptz '1970-01-01 00:00:00+00')
           AS bucket,
       x.key, count(*) AS n
  FROM (SELECT 'attempt'::text AS series, a.started_at AS at, a.outcome AS key
          FROM redrive_pgboss.attempt_timeline a
        UNION ALL
        SELECT 'dead', d.dead_at, coalesce(d.error_class, '') FROM redrive_pgboss.dead_letter_list d
        UNION ALL
        SELECT 'resolved', d.resolved_at, '' FROM redrive_pgboss.dead_letter_list d
         WHERE d.resolved_at IS NOT NULL) x
 CROSS JOIN (VALUES (60), (3600)) g (grain_s)
 GROUP BY 1, 2, 3, 4;

GRANT SELECT ON redrive_pgboss.dead_letter_facet_list, redrive_pgboss.bucket_rollup_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;

UPDATE redrive.source SET adapter_version = 6 WHERE name = 'pgboss';
