-- One dead letter for the case view. The payload comes as a preview of at most $2 bytes with its
-- full size; dead_letter_payload.sql loads the rest on request (payloads over 1 MB are previewed).
-- class_because (queue sources): why the error class, from the rule table (docs/architecture.md,
-- "Error classes"); when the rules on the code and message give another class, the class came
-- from the error's own fields.
-- A native job enqueued with its text keeps it as received (migration 0016): payload_received.
-- group_name: the failure group by the name the groups list gives it (failure_groups.sql): the
-- error code (or class) and the normalized first line of its message; one primary-key lookup.
SELECT d.id, d.job_ref, d.queue, d.kind, d.status, d.reason, d.error_class, d.error_code,
       d.last_error, d.stack_trace, d.attempts, d.idempotency_key, d.fingerprint, d.dead_at,
       d.version, d.claimed_by, d.claimed_at, d.resolution, d.resolution_note, d.resolved_by,
       d.resolved_at, d.payload_size,
       CASE WHEN d.payload_size <= $2 THEN d.payload_text END AS payload_text,
       CASE WHEN d.payload_size <= $2 THEN d.payload_bytes END AS payload_bytes,
       CASE WHEN d.payload_size > $2
            THEN coalesce(convert_to(left(d.payload_text, $2::integer), 'UTF8'),
                          substring(d.payload_bytes FROM 1 FOR $2::integer)) END AS payload_preview,
       d.payload_text IS NULL AND d.payload_bytes IS NOT NULL AS payload_is_bytes,
       CASE WHEN d.source = 'native' AND d.payload_size <= $2
            THEN redrive.payload_as_received(d.id) END AS payload_received,
       d.headers::text AS headers_text, d.entity_id, d.event_seq, d.event_at, d.job_state,
       d.job_attempt, d.max_attempts, d.locked_by, d.locked_until, d.run_at, d.job_created_at,
       d.deadline_at, d.source, clock_timestamp() AS server_now,
       (SELECT coalesce(g.error_code, g.error_class) || ': '
               || normalize_error_message(split_part(g.sample_message, E'\n', 1))
          FROM failure_group_list g
         WHERE g.fingerprint = d.fingerprint) AS group_name,
       CASE WHEN d.source <> 'native' AND d.error_class IS NOT NULL
            THEN coalesce((SELECT w.because
                             FROM redrive.classify_source_error_why(d.source, d.last_error,
                                                                    d.error_code, NULL) w
                            WHERE w.error_class = d.error_class),
                          'the error''s own fields (errorClass, retryable, status, responseCode)')
       END AS class_because
  FROM dead_letter_detail d
 WHERE d.id = $1
