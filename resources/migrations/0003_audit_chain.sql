-- Redrive native schema, version 3: the audit log's hash chain (DESIGN §3 rule 7).
-- Every appended entry gets prev_hash = the hash of the entry before it and
-- hash = SHA-256(prev_hash || canonical form of the entry). A BEFORE INSERT trigger does it, so no
-- writer can append an entry outside the chain. Appends are serialized by a transaction-level
-- advisory lock held until commit, and the entry's id is drawn while holding it, so id order is
-- chain order and the chain never forks.

-- The canonical form hashed for an entry: its fields as a jsonb object rendered as text
-- (jsonb orders keys and normalises white space, so the text is stable), UTF-8 encoded.
-- Timestamps are rendered in UTC with microseconds, independent of the session TimeZone.
CREATE FUNCTION redrive.audit_canonical(e redrive.audit_log) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN convert_to(jsonb_build_object(
           'id', e.id,
           'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
           'db_user', e.db_user,
           'client_addr', host(e.client_addr),
           'os_user', e.os_user,
           'action', e.action,
           'targets', e.targets,
           'reason', e.reason,
           'ticket', e.ticket,
           'before', e.before,
           'after', e.after,
           'action_id', e.action_id,
           'outcome', e.outcome)::text, 'UTF8');

CREATE FUNCTION redrive.audit_entry_hash(prev_hash bytea, e redrive.audit_log) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN sha256(coalesce(prev_hash, '\x'::bytea) || redrive.audit_canonical(e));

CREATE FUNCTION redrive.audit_log_chain() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_prev bytea;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('redrive.audit_log chain', 0));
    NEW.id := nextval('redrive.audit_log_id_seq');
    SELECT hash INTO v_prev FROM redrive.audit_log ORDER BY id DESC LIMIT 1;
    NEW.at := clock_timestamp();
    NEW.db_user := session_user;
    NEW.client_addr := inet_client_addr();
    NEW.prev_hash := v_prev;
    NEW.hash := redrive.audit_entry_hash(v_prev, NEW);
    RETURN NEW;
END
$$;

CREATE TRIGGER audit_log_chain
    BEFORE INSERT ON redrive.audit_log
    FOR EACH ROW EXECUTE FUNCTION redrive.audit_log_chain();

-- Recomputes the chain from the first entry (or from p_from_id, trusting the stored prev_hash of
-- that entry) and returns the first entry whose prev_hash or hash does not match, with the
-- reason; no row when the whole chain holds. Also compares the head with an exported head
-- (p_expected_id, p_expected_hash) when given: a chain that ends before the exported entry, or
-- holds another hash there, was cut or rewritten.
CREATE FUNCTION redrive.verify_audit_chain(p_from_id bigint DEFAULT NULL,
                                           p_expected_id bigint DEFAULT NULL,
                                           p_expected_hash bytea DEFAULT NULL)
RETURNS TABLE (broken_id bigint, problem text, checked bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e redrive.audit_log%ROWTYPE;
    v_prev bytea;
    v_first boolean := true;
    v_checked bigint := 0;
    v_seen_expected boolean := false;
BEGIN
    FOR e IN SELECT * FROM redrive.audit_log WHERE id >= coalesce(p_from_id, 0) ORDER BY id LOOP
        IF v_first THEN
            v_prev := CASE WHEN p_from_id IS NULL THEN NULL ELSE e.prev_hash END;
            v_first := false;
        END IF;
        IF e.prev_hash IS DISTINCT FROM v_prev THEN
            RETURN QUERY SELECT e.id, 'prev_hash does not match the hash of the entry before it',
                                v_checked;
            RETURN;
        END IF;
        IF e.hash IS DISTINCT FROM redrive.audit_entry_hash(v_prev, e) THEN
            RETURN QUERY SELECT e.id, 'hash does not match the entry''s contents', v_checked;
            RETURN;
        END IF;
        IF e.id = p_expected_id THEN
            v_seen_expected := true;
            IF e.hash IS DISTINCT FROM p_expected_hash THEN
                RETURN QUERY SELECT e.id, 'hash differs from the exported chain head', v_checked;
                RETURN;
            END IF;
        END IF;
        v_prev := e.hash;
        v_checked := v_checked + 1;
    END LOOP;
    IF p_expected_id IS NOT NULL AND NOT v_seen_expected THEN
        RETURN QUERY SELECT p_expected_id,
                            'the exported chain head is missing: entries were deleted', v_checked;
        RETURN;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION redrive.verify_audit_chain(bigint, bigint, bytea),
                       redrive.audit_canonical(redrive.audit_log),
                       redrive.audit_entry_hash(bytea, redrive.audit_log) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.verify_audit_chain(bigint, bigint, bytea),
                          redrive.audit_canonical(redrive.audit_log),
                          redrive.audit_entry_hash(bytea, redrive.audit_log)
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
