-- Retention (docs/architecture.md, "Retention"; docs/audit-chain.md, "Detached months"):
-- resolved dead letters older than a period are archived by an audited action that removes
-- exactly the rows the client exported and fsynced first, and an audit month whose entries were
-- exported is detached after the chain head at its end was recorded, so verification starts
-- from that head. Both for redrive_admin (docs/security.md, "Roles").

-- ---------------------------------------------------------------------------------------------
-- Archiving resolved dead letters.

-- The cutoff of a retention period: now minus the period, which must be at least a day.
CREATE FUNCTION redrive.archive_cutoff(p_older_than interval) RETURNS timestamptz
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_older_than IS NULL OR p_older_than < interval '1 day' THEN
        RAISE EXCEPTION 'the retention period must be at least one day'
              USING ERRCODE = 'check_violation';
    END IF;
    RETURN now() - p_older_than;
END
$$;

-- Whether a dead letter may be archived at p_cutoff: resolved, nothing about it (the dead
-- letter, its job, any attempt) newer than the cutoff, its job neither queued nor running, no
-- compensation request naming it (money keeps its subject), no idempotency key naming its job
-- (the key outlives the job it points at) and no outbox command for it still to be carried out.
CREATE FUNCTION redrive.archive_eligible(p_dead_letter bigint, p_cutoff timestamptz)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
RETURN EXISTS (
    SELECT 1
      FROM redrive.dead_letter d
      JOIN redrive.job j ON j.id = d.job_id
     WHERE d.id = p_dead_letter
       AND d.status = 'resolved'
       AND d.resolved_at < p_cutoff AND d.dead_at < p_cutoff AND d.updated_at < p_cutoff
       AND j.state IN ('succeeded', 'dead') AND j.updated_at < p_cutoff
       AND NOT EXISTS (SELECT 1 FROM redrive.attempt a
                        WHERE a.job_id = j.id
                          AND (a.started_at >= p_cutoff OR a.finished_at IS NULL
                               OR a.finished_at >= p_cutoff))
       AND NOT EXISTS (SELECT 1 FROM redrive.compensation_request c
                        WHERE c.target_type = 'dead_letter' AND c.target_id = d.id)
       AND NOT EXISTS (SELECT 1 FROM redrive.idempotency_key k WHERE k.job_id = j.id)
       AND NOT EXISTS (SELECT 1 FROM redrive.outbox o
                        WHERE o.status IN ('pending', 'processing')
                          AND (o.target_type = 'dead_letter' AND o.target_id = d.id::text
                               OR o.target_type = 'job' AND o.target_id = j.id::text)));

-- The line a dead letter is archived as: one JSON object with the dead letter, its job, its
-- attempts (oldest first, from every month) and the ids of the audit entries naming it, as
-- jsonb prints it, times in UTC whatever the session's time zone. The archive's digest is
-- SHA-256 over these lines, each followed by "\n".
CREATE FUNCTION redrive.archive_line(p_dead_letter bigint) RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
RETURN (
    SELECT jsonb_build_object(
               'dead_letter', to_jsonb(d),
               'job', to_jsonb(j),
               'attempts', coalesce((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.started_at, a.id)
                                       FROM redrive.attempt a WHERE a.job_id = j.id), '[]'),
               'audit_ids', coalesce((SELECT jsonb_agg(e.id ORDER BY e.id)
                                        FROM redrive.audit_log e
                                       WHERE e.targets @> jsonb_build_array(jsonb_build_object(
                                                 'type', 'dead_letter', 'id', d.id))), '[]')
           )::text
      FROM redrive.dead_letter d
      JOIN redrive.job j ON j.id = d.job_id
     WHERE d.id = p_dead_letter);

-- `redrive archive`, step one: the next dead letters (after p_after_id, at most p_limit, in id
-- order) that may be archived with a period of p_older_than, each with its line. Reads only.
CREATE FUNCTION redrive.archive_candidates(p_older_than interval, p_after_id bigint,
                                           p_limit integer)
RETURNS TABLE (id bigint, line text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_cutoff timestamptz;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_admin']);
    v_cutoff := redrive.archive_cutoff(p_older_than);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > redrive.max_targets_per_call() THEN
        RAISE EXCEPTION 'read between 1 and % dead letters at a time',
                        redrive.max_targets_per_call()
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
    SELECT d.id, redrive.archive_line(d.id)
      FROM redrive.dead_letter d
     WHERE d.id > coalesce(p_after_id, 0)
       AND d.status = 'resolved' AND d.resolved_at < v_cutoff
       AND redrive.archive_eligible(d.id, v_cutoff)
     ORDER BY d.id
     LIMIT p_limit;
END
$$;
COMMENT ON FUNCTION redrive.archive_candidates(interval, bigint, integer) IS
    'redrive archive: the next dead letters that may be archived with this retention period, with the JSON line each is exported as (redrive_admin; docs/architecture.md "Retention")';

-- `redrive archive`, step two, after the lines were written and fsynced: removes exactly the
-- dead letters p_ids with their jobs and attempts, when each may still be archived and SHA-256
-- over their lines as they are now is p_lines_sha256 (what the client wrote); otherwise removes
-- nothing. One audit entry names every dead letter and records the count, the id range, the
-- digest, the file and the byte offset at which the lines start in it.
CREATE FUNCTION redrive.archive_dead_letters(p_action_id uuid, p_ids bigint[],
                                             p_lines_sha256 text, p_older_than interval,
                                             p_file text, p_file_offset bigint, p_reason text,
                                             p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_cutoff timestamptz;
    v_count integer := cardinality(p_ids);
    v_eligible integer;
    v_digest text;
    v_jobs bigint[];
    v_attempts bigint;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_admin']);
    PERFORM redrive.require_reason(p_reason);
    v_cutoff := redrive.archive_cutoff(p_older_than);
    IF v_count IS NULL OR v_count = 0 OR v_count > redrive.max_targets_per_call()
       OR array_position(p_ids, NULL) IS NOT NULL
       OR (SELECT count(DISTINCT x) FROM unnest(p_ids) x) <> v_count THEN
        RAISE EXCEPTION 'archive between 1 and % distinct dead letters per call',
                        redrive.max_targets_per_call()
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_lines_sha256 IS NULL OR p_lines_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'the digest of the exported lines is a SHA-256 in lower-case hex'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'archive_dead_letters', p_os_user, NULL,
        jsonb_build_object('ids', to_jsonb(p_ids), 'lines_sha256', p_lines_sha256,
                           'older_than', p_older_than::text, 'file', p_file,
                           'file_offset', p_file_offset, 'reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;

    PERFORM 1 FROM redrive.dead_letter d WHERE d.id = ANY (p_ids) ORDER BY d.id FOR UPDATE;
    SELECT array_agg(d.job_id ORDER BY d.id) INTO v_jobs
      FROM redrive.dead_letter d WHERE d.id = ANY (p_ids);
    PERFORM 1 FROM redrive.job j WHERE j.id = ANY (v_jobs) ORDER BY j.id FOR UPDATE;
    SELECT count(*) FILTER (WHERE redrive.archive_eligible(x, v_cutoff)) INTO v_eligible
      FROM unnest(p_ids) x;
    IF v_eligible <> v_count THEN
        RAISE EXCEPTION '% of the % dead letters are gone or no longer resolved and older than %: nothing was archived',
                        v_count - v_eligible, v_count, p_older_than
              USING ERRCODE = 'check_violation',
                    HINT = 'Run the archive again: it exports and removes only what may go.';
    END IF;
    SELECT encode(sha256(convert_to(string_agg(redrive.archive_line(x) || E'\n', '' ORDER BY x),
                                    'UTF8')), 'hex')
      INTO v_digest FROM unnest(p_ids) x;
    IF v_digest <> p_lines_sha256 THEN
        RAISE EXCEPTION 'the exported lines are not these dead letters as they are now: nothing was archived'
              USING ERRCODE = 'check_violation',
                    DETAIL = format('SHA-256 of the lines written %s, of the rows now %s',
                                    p_lines_sha256, v_digest),
                    HINT = 'A row changed after it was exported; run the archive again.';
    END IF;

    DELETE FROM redrive.attempt a WHERE a.job_id = ANY (v_jobs);
    GET DIAGNOSTICS v_attempts = ROW_COUNT;
    DELETE FROM redrive.dead_letter d WHERE d.id = ANY (p_ids);
    DELETE FROM redrive.job j WHERE j.id = ANY (v_jobs);

    RETURN redrive.finish_action(
        p_action_id, 'archive_dead_letters',
        (SELECT jsonb_agg(jsonb_build_object('type', 'dead_letter', 'id', x) ORDER BY x)
           FROM unnest(p_ids) x),
        p_reason, NULL, p_os_user, NULL, NULL,
        jsonb_build_object('archived', v_count, 'attempts', v_attempts,
                           'first_id', (SELECT min(x) FROM unnest(p_ids) x),
                           'last_id', (SELECT max(x) FROM unnest(p_ids) x),
                           'lines_sha256', p_lines_sha256, 'file', p_file,
                           'file_offset', p_file_offset, 'older_than', p_older_than::text,
                           'confirmed', v_count, 'applied', v_count, 'conflicts', 0,
                           'refused', 0));
END
$$;
COMMENT ON FUNCTION redrive.archive_dead_letters(uuid, bigint[], text, interval, text, bigint, text, text) IS
    'redrive archive: removes exactly the exported dead letters with their jobs and attempts, when each may still be archived and their lines'' SHA-256 matches; audited (redrive_admin; docs/architecture.md "Retention")';

-- ---------------------------------------------------------------------------------------------
-- Detaching an exported audit month.

-- One row per detached month: the chain head at its end, from which verification starts
-- (docs/audit-chain.md, "Detached months"). Written only by redrive.detach_audit_month, never
-- changed: a superuser who rewrites it anyway is caught, since the first entry kept holds the
-- head in its prev_hash, which its own hash covers.
CREATE TABLE redrive.audit_detached_month (
    month          date        PRIMARY KEY,
    partition_name text        NOT NULL,
    first_id       bigint      NOT NULL,
    last_id        bigint      NOT NULL,
    entries        bigint      NOT NULL,
    head_hash      bytea       NOT NULL CHECK (octet_length(head_hash) = 32),
    export_sha256  text        NOT NULL CHECK (export_sha256 ~ '^[0-9a-f]{64}$'),
    recorded_by    text        NOT NULL DEFAULT session_user,
    recorded_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    action_id      uuid        NOT NULL,
    audit_id       bigint      NOT NULL,
    CHECK (month = date_trunc('month', month)::date),
    CHECK (first_id <= last_id AND entries > 0)
);
COMMENT ON TABLE redrive.audit_detached_month IS 'Audit months detached after their export: the chain head at each month''s end, where verification starts (docs/audit-chain.md "Detached months")';

CREATE FUNCTION redrive.audit_detached_month_refuse_change() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'redrive.audit_detached_month is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'A recorded chain head is never changed; verification checks it.';
END
$$;
CREATE TRIGGER audit_detached_month_no_update_delete
    BEFORE UPDATE OR DELETE ON redrive.audit_detached_month
    FOR EACH ROW EXECUTE FUNCTION redrive.audit_detached_month_refuse_change();
CREATE TRIGGER audit_detached_month_no_truncate
    BEFORE TRUNCATE ON redrive.audit_detached_month
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.audit_detached_month_refuse_change();
REVOKE ALL ON redrive.audit_detached_month FROM PUBLIC;
GRANT SELECT ON redrive.audit_detached_month
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_admin;
REVOKE ALL ON FUNCTION redrive.audit_detached_month_refuse_change() FROM PUBLIC;

-- `redrive audit-detach`: after the client checked an export of the month against the chain,
-- records the head at the month's end (p_last_id, p_head_hash, p_entries must be the month's:
-- its last entry, that entry's hash, how many it holds) with the export's SHA-256, audits it,
-- and detaches the month's partition. Only a month that has ended, that has its own partition,
-- holds entries and is the oldest left (months go in order, so the chain kept is one piece).
-- The detached table stays in the schema for the DBA to dump and drop; Redrive never drops it.
CREATE FUNCTION redrive.detach_audit_month(p_action_id uuid, p_month date, p_last_id bigint,
                                           p_head_hash text, p_entries bigint,
                                           p_export_sha256 text, p_reason text,
                                           p_os_user text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev jsonb;
    v_from timestamptz;
    v_to timestamptz;
    v_name text;
    v_first bigint;
    v_last bigint;
    v_count bigint;
    v_hash bytea;
    v_outcome jsonb;
BEGIN
    PERFORM redrive.require_role(ARRAY['redrive_admin']);
    PERFORM redrive.require_reason(p_reason);
    IF p_month IS NULL OR p_month <> date_trunc('month', p_month)::date THEN
        RAISE EXCEPTION 'name the month by its first day' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_head_hash IS NULL OR p_head_hash !~ '^[0-9a-f]{64}$'
       OR p_export_sha256 IS NULL OR p_export_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'the head hash and the export''s digest are SHA-256 in lower-case hex'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_from := p_month::timestamp AT TIME ZONE 'UTC';
    v_to := (p_month + interval '1 month') AT TIME ZONE 'UTC';
    v_name := 'audit_log_' || to_char(p_month, 'YYYY_MM');
    IF v_to > now() THEN
        RAISE EXCEPTION 'audit month % has not ended', to_char(p_month, 'YYYY-MM')
              USING ERRCODE = 'check_violation';
    END IF;
    v_prev := redrive.begin_action(
        p_action_id, 'detach_audit_month', p_os_user, NULL,
        jsonb_build_object('month', to_char(p_month, 'YYYY-MM'), 'last_id', p_last_id,
                           'head_hash', p_head_hash, 'entries', p_entries,
                           'export_sha256', p_export_sha256, 'reason', p_reason));
    IF v_prev IS NOT NULL THEN
        RETURN v_prev;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
                    WHERE i.inhparent = 'redrive.audit_log'::regclass
                      AND p.relname = v_name
                      AND p.relnamespace = 'redrive'::regnamespace) THEN
        RAISE EXCEPTION 'audit month % has no partition of its own to detach (already detached, or its entries are in audit_log_default)',
                        to_char(p_month, 'YYYY-MM')
              USING ERRCODE = 'check_violation';
    END IF;
    -- No entry is chained meanwhile.
    PERFORM 1 FROM redrive.audit_chain_lock FOR UPDATE;
    EXECUTE format('SELECT min(id), max(id), count(*) FROM redrive.%I', v_name)
       INTO v_first, v_last, v_count;
    IF v_count = 0 THEN
        RAISE EXCEPTION 'audit month % holds no entries: nothing to detach',
                        to_char(p_month, 'YYYY-MM')
              USING ERRCODE = 'check_violation';
    END IF;
    IF EXISTS (SELECT 1 FROM redrive.audit_log e WHERE e.id < v_first)
       OR EXISTS (SELECT 1 FROM redrive.audit_log e
                   WHERE e.id BETWEEN v_first AND v_last AND NOT (e.at >= v_from AND e.at < v_to)) THEN
        RAISE EXCEPTION 'audit month % is not the oldest part of the chain: detach the months before it first',
                        to_char(p_month, 'YYYY-MM')
              USING ERRCODE = 'check_violation';
    END IF;
    SELECT e.hash INTO v_hash FROM redrive.audit_log e
     WHERE e.id = v_last AND e.at >= v_from AND e.at < v_to;
    IF p_last_id IS DISTINCT FROM v_last OR p_entries IS DISTINCT FROM v_count
       OR p_head_hash <> encode(v_hash, 'hex') THEN
        RAISE EXCEPTION 'the export does not end at the head of audit month %: nothing was detached',
                        to_char(p_month, 'YYYY-MM')
              USING ERRCODE = 'check_violation',
                    DETAIL = format('The month holds %s entries ending at entry %s with hash %s.',
                                    v_count, v_last, encode(v_hash, 'hex'));
    END IF;
    v_outcome := redrive.finish_action(
        p_action_id, 'detach_audit_month',
        jsonb_build_array(jsonb_build_object('type', 'audit_entry', 'id', v_last)),
        p_reason, NULL, p_os_user, NULL,
        jsonb_build_object('month', to_char(p_month, 'YYYY-MM'), 'partition', v_name,
                           'first_id', v_first, 'last_id', v_last, 'entries', v_count,
                           'head_hash', encode(v_hash, 'hex'), 'export_sha256', p_export_sha256),
        jsonb_build_object('detached', 1, 'confirmed', 1, 'applied', 1, 'conflicts', 0,
                           'refused', 0));
    INSERT INTO redrive.audit_detached_month (month, partition_name, first_id, last_id, entries,
                                              head_hash, export_sha256, action_id, audit_id)
    VALUES (p_month, v_name, v_first, v_last, v_count, v_hash, p_export_sha256, p_action_id,
            (v_outcome ->> 'audit_id')::bigint);
    EXECUTE format('ALTER TABLE redrive.audit_log DETACH PARTITION redrive.%I', v_name);
    RETURN v_outcome;
END
$$;
COMMENT ON FUNCTION redrive.detach_audit_month(uuid, date, bigint, text, bigint, text, text, text) IS
    'redrive audit-detach: records the chain head at the end of an exported audit month and detaches its partition; audited (redrive_admin; docs/audit-chain.md "Detached months")';

REVOKE ALL ON FUNCTION redrive.archive_cutoff(interval),
                       redrive.archive_eligible(bigint, timestamptz),
                       redrive.archive_line(bigint),
                       redrive.archive_candidates(interval, bigint, integer),
                       redrive.archive_dead_letters(uuid, bigint[], text, interval, text, bigint,
                                                    text, text),
                       redrive.detach_audit_month(uuid, date, bigint, text, bigint, text, text,
                                                  text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.archive_candidates(interval, bigint, integer),
                          redrive.archive_dead_letters(uuid, bigint[], text, interval, text,
                                                       bigint, text, text),
                          redrive.detach_audit_month(uuid, date, bigint, text, bigint, text,
                                                     text, text)
    TO redrive_admin;
