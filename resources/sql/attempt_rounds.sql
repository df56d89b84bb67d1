-- The rounds of dead letter $1's retry history (docs/domain.md#a-requeues-story): round 1 runs
-- until the first applied requeue, and each requeue starts the next; an attempt belongs to the
-- round whose requeue is the last one at or before its start. Per round: the requeue that
-- started it (who, when, action id, reset; NULL for round 1), how many attempts it has, and its
-- last attempt. One row per requeue plus one, however many attempts there are.
WITH m AS ({{requeue_markers}}),
     r AS (SELECT 1::bigint AS round, NULL::timestamptz AS from_at, NULL::text AS requeued_by,
                  NULL::text AS action_id, NULL::boolean AS reset_attempts
           UNION ALL
           SELECT 1 + row_number() OVER (ORDER BY m.at, m.audit_id), m.at, m.db_user,
                  m.action_id, m.reset_attempts
             FROM m),
     b AS (SELECT r.*, lead(r.from_at) OVER (ORDER BY r.round) AS until_at FROM r)
SELECT b.round, b.from_at AS requeued_at, b.requeued_by, b.action_id, b.reset_attempts,
       (SELECT count(*)
          FROM attempt_history a
         WHERE a.dead_letter_id = $1
           AND (b.from_at IS NULL OR a.started_at >= b.from_at)
           AND (b.until_at IS NULL OR a.started_at < b.until_at)) AS attempts,
       l.attempt_no AS last_attempt_no, l.outcome AS last_outcome,
       l.error_class AS last_error_class
  FROM b
  LEFT JOIN LATERAL (
        SELECT a.attempt_no, a.outcome, a.error_class
          FROM attempt_history a
         WHERE a.dead_letter_id = $1
           AND (b.from_at IS NULL OR a.started_at >= b.from_at)
           AND (b.until_at IS NULL OR a.started_at < b.until_at)
         ORDER BY a.started_at DESC, a.id DESC
         LIMIT 1) l ON true
 ORDER BY b.round
