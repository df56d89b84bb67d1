-- SPDX-License-Identifier: GPL-3.0-or-later
-- The lists both pg-boss lines of the Redrive source "pgboss" compute from their own
-- dead_letter_list: included (`\ir`) by pg-boss 10's and pg-boss 12's file once that view
-- exists. A change here is a change to both lines: rename both files to their next version.

CREATE VIEW redrive_pgboss.failure_group_list AS
SELECT d.fingerprint, min(d.kind) AS kind, min(d.error_class) AS error_class,
       min(d.error_code) AS error_code, min(d.last_error) AS sample_message,
       min(d.dead_at) AS first_seen
  FROM redrive_pgboss.dead_letter_list d
 GROUP BY d.fingerprint;

-- The read contract's additions of Redrive's migration 18
-- (docs/architecture.md#reads-at-scale). The queue's tables carry no rollups of Redrive's, so
-- both views are computed from the adapter's own views when they are read; they keep the
-- contract's columns so that the console's statements read every source alike.

-- The queues and kinds the filter bar offers.
CREATE VIEW redrive_pgboss.dead_letter_facet_list AS
SELECT 'queue'::text AS facet, q.queue AS value
  FROM (SELECT DISTINCT d.queue FROM redrive_pgboss.dead_letter_list d) q
UNION ALL
SELECT 'kind', k.kind FROM (SELECT DISTINCT d.kind FROM redrive_pgboss.dead_letter_list d) k;

-- Overview time buckets (the adapter's version of migration 18's rollup), with the same rule.
CREATE OR REPLACE VIEW redrive_pgboss.bucket_rollup_list AS
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
 WHERE isfinite(x.at) AND x.at < timestamptz '294000-01-01 00:00:00+00'
 GROUP BY 1, 2, 3, 4;

GRANT SELECT ON redrive_pgboss.failure_group_list, redrive_pgboss.dead_letter_facet_list,
                redrive_pgboss.bucket_rollup_list
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
