-- The preview of an action on dead letters (docs/domain.md#bulk-actions-act-on-the-frozen-set,
-- docs/domain.md#requeue-checks-the-ordering-key): the targets the operator
-- is about to confirm, each with the version to confirm, where it lives and the worst of its
-- safe-to-retry verdicts. $1 explicit ids (bigint[], or NULL); $2 a failure group's fingerprint
-- (or NULL): its open dead letters. Ordered by id, so the frozen list is stable.
WITH targets AS (
    SELECT d.id, d.version, d.status, d.queue, d.kind, d.error_class, d.error_code,
           d.fingerprint, d.claimed_by
      FROM dead_letter_list d
     WHERE d.id IN (SELECT unnest($1::bigint[]))
    UNION
    SELECT d.id, d.version, d.status, d.queue, d.kind, d.error_class, d.error_code,
           d.fingerprint, d.claimed_by
      FROM dead_letter_list d
     WHERE $2::text IS NOT NULL AND d.fingerprint = $2::text AND d.status = 'open'
)
SELECT t.id, t.version, t.status, t.queue, t.kind, t.error_class, t.error_code, t.fingerprint,
       t.claimed_by,
       coalesce(v.severity, 'ok') AS verdict,
       coalesce(v.reasons, '') AS verdict_reasons
  FROM targets t
  LEFT JOIN LATERAL (
        SELECT CASE WHEN bool_or(r.severity = 'block') THEN 'block'
                    WHEN bool_or(r.severity = 'warn') THEN 'warn' END AS severity,
               string_agg(r.explanation, ' ' ORDER BY r.severity, r.code) AS reasons
          FROM retry_verdict(t.id) r) v ON true
 ORDER BY t.id
