d.id, d.dead_at, d.queue, d.kind, d.status, d.error_class, d.error_code,
       substr(d.last_error, 1, 4096) AS last_error,
       redrive.cut_bytes(d.last_error, 4096) AS last_error_cut_bytes,
       d.attempts, d.idempotency_key,
       d.fingerprint, d.version, d.claimed_by, d.reason, d.job_ref, d.state_note,
       CASE WHEN isfinite(d.dead_at)
            THEN (extract(epoch FROM clock_timestamp()) - extract(epoch FROM d.dead_at))::bigint
       END AS age_seconds,
       pay.payment_ref, pay.amount_minor, pay.currency
