-- A keyset page of dead letter $1's retry history, newest first: its attempts (row_kind
-- 'attempt') and the applied requeues between them as marker rows (row_kind 'requeue': who,
-- when, action id, reset). Each attempt carries its round (1 + the requeues at or before its
-- start) and its number in that round: attempt_no less the last attempt_no before the round's
-- requeue, unless the counter was reset (then attempt_no itself). Keyset of the last row shown:
-- $2 at, $3 kind_order (0 attempt, 1 requeue: a requeue sorts after the attempts of its
-- instant), $4 id; NULLs for the first page. $5 rows. Attempts are read through the
-- (job_id, started_at, id) index, never with OFFSET (docs/architecture.md#reading-a-page).
-- Message and stack trace are sent cut to their first 2,000 characters, with the bytes left
-- out of each (message_cut_bytes, stack_trace_cut_bytes: 0 when whole); attempt_whole_text.sql
-- reads them whole and attempt_text.sql what the pane shows of the one selected
-- (docs/architecture.md#long-values-in-lists). octet_length and substr read
-- only the value's size and its first slice, never the whole of a large value.
WITH m AS ({{requeue_markers}}),
     rounds AS (
        SELECT m.*, 1 + row_number() OVER (ORDER BY m.at, m.audit_id) AS round,
               (SELECT a.attempt_no
                  FROM attempt_history a
                 WHERE a.dead_letter_id = $1 AND a.started_at < m.at
                 ORDER BY a.started_at DESC, a.id DESC
                 LIMIT 1) AS base
          FROM m),
     page AS (
        (SELECT 'attempt'::text AS row_kind, 0 AS kind_order, a.id, a.started_at AS at,
                a.attempt_no, a.finished_at, a.duration_ms, a.outcome, a.error_class,
                a.error_code, substr(a.message, 1, 2000) AS message,
                redrive.cut_bytes(a.message, 2000) AS message_cut_bytes,
                substr(a.stack_trace, 1, 2000) AS stack_trace,
                redrive.cut_bytes(a.stack_trace, 2000) AS stack_trace_cut_bytes,
                a.worker_id, a.backoff_ms, NULL::text AS requeued_by, NULL::text AS action_id,
                NULL::boolean AS reset_attempts
           FROM attempt_history a
          WHERE a.dead_letter_id = $1
            AND ($2::timestamptz IS NULL
                 OR (a.started_at, a.id)
                    < ($2::timestamptz,
                       CASE WHEN $3::integer > 0 THEN 9223372036854775807 ELSE $4::bigint END))
          ORDER BY a.started_at DESC, a.id DESC
          LIMIT $5)
        UNION ALL
        SELECT 'requeue', 1, r.audit_id, r.at, NULL, NULL, NULL, 'requeued', NULL, NULL, NULL,
               NULL, NULL, NULL, NULL, NULL, r.db_user, r.action_id, r.reset_attempts
          FROM rounds r
         WHERE $2::timestamptz IS NULL OR (r.at, 1, r.audit_id) < ($2::timestamptz, $3::integer,
                                                                   $4::bigint))
SELECT p.row_kind, p.kind_order, p.id, p.at, p.attempt_no, p.finished_at, p.duration_ms,
       p.outcome, p.error_class, p.error_code, p.message, p.message_cut_bytes, p.stack_trace,
       p.stack_trace_cut_bytes, p.worker_id,
       p.backoff_ms, p.requeued_by, p.action_id, p.reset_attempts,
       CASE WHEN p.row_kind = 'attempt' THEN coalesce(c.round, 1) ELSE r.round END AS round,
       CASE WHEN p.row_kind = 'attempt'
            THEN CASE WHEN c.base IS NOT NULL AND p.attempt_no > c.base
                      THEN p.attempt_no - c.base ELSE p.attempt_no END END AS attempt_in_round
  FROM (SELECT * FROM page ORDER BY at DESC, kind_order DESC, id DESC LIMIT $5) p
  LEFT JOIN rounds r ON p.row_kind = 'requeue' AND r.audit_id = p.id
  LEFT JOIN LATERAL (
        SELECT r2.round, r2.base
          FROM rounds r2
         WHERE p.row_kind = 'attempt' AND r2.at <= p.at
         ORDER BY r2.at DESC, r2.audit_id DESC
         LIMIT 1) c ON true
 ORDER BY p.at DESC, p.kind_order DESC, p.id DESC
