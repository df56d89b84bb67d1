-- The preview of an action on dead letters (docs/domain.md#bulk-actions-act-on-the-frozen-set,
-- docs/domain.md#requeue-checks-the-ordering-key): the targets the operator
-- is about to confirm, each with the version to confirm, where it lives and the worst of its
-- safe-to-retry verdicts. $1 explicit ids (bigint[], or NULL); $2 a failure group's fingerprint
-- (or NULL): its open dead letters. Ordered by id, so the frozen list is stable.
-- One scan for both: a UNION of the two sorted and deduplicated the whole group on disk
-- (docs/benchmarks.md, the preview row).
WITH targets AS MATERIALIZED (
    SELECT d.id, d.version, d.status, d.queue, d.kind, d.error_class, d.error_code,
           d.fingerprint, d.claimed_by
      FROM dead_letter_list d
     WHERE d.id = ANY ($1::bigint[])
        OR ($2::text IS NOT NULL AND d.fingerprint = $2::text AND d.status = 'open')
),
-- The verdicts come from one set-based query, retry_verdicts() (migration 0014), when the
-- native source is read; a source adapter's own retry_verdict() is asked per target.
reasons AS (
    SELECT v.dead_letter_id AS id, v.severity, v.code, v.explanation
      FROM retry_verdicts((SELECT array_agg(t.id) FROM targets t)) v
     WHERE to_regprocedure('retry_verdict(bigint)') = 'redrive.retry_verdict(bigint)'::regprocedure
    UNION ALL
    SELECT t.id, v.severity, v.code, v.explanation
      FROM targets t CROSS JOIN LATERAL retry_verdict(t.id) v
     WHERE to_regprocedure('retry_verdict(bigint)')
           IS DISTINCT FROM 'redrive.retry_verdict(bigint)'::regprocedure),
worst AS (
    SELECT r.id,
           CASE WHEN bool_or(r.severity = 'block') THEN 'block'
                WHEN bool_or(r.severity = 'warn') THEN 'warn' END AS severity,
           string_agg(r.explanation, ' ' ORDER BY r.severity, r.code) AS reasons
      FROM reasons r
     GROUP BY r.id)
SELECT t.id, t.version, t.status, t.queue, t.kind, t.error_class, t.error_code, t.fingerprint,
       t.claimed_by,
       coalesce(v.severity, 'ok') AS verdict,
       coalesce(v.reasons, '') AS verdict_reasons
  FROM targets t
  LEFT JOIN worst v ON v.id = t.id
 ORDER BY t.id
