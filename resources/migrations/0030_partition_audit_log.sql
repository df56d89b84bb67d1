-- The audit log is range-partitioned by month on at (docs/architecture.md, "Partitions";
-- docs/audit-chain.md, "Partitions"). The conversion keeps every entry byte for byte with its id
-- and hash, in id order, so the chain verifies before and after; the triggers that chain entries
-- and refuse UPDATE, DELETE and TRUNCATE are on the partitioned table (the row triggers are cloned
-- to every partition) and a TRUNCATE trigger is on each partition itself; the grants, indexes,
-- the views reading entries and the worker's audit function carry over. Month boundaries are
-- midnight UTC on the first of the month.

-- No entry is appended meanwhile (the chain trigger locks audit_chain_lock first).
LOCK TABLE redrive.audit_chain_lock, redrive.audit_log IN ACCESS EXCLUSIVE MODE;

-- What reads or names the table's row type, to carry over.
CREATE TEMPORARY TABLE audit_dependent_view ON COMMIT DROP AS
SELECT v.oid::regclass::text AS name, pg_get_viewdef(v.oid) AS definition,
       array_to_string(v.reloptions, ', ') AS options
  FROM pg_class v
 WHERE v.relkind = 'v'
   AND v.oid IN (SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
                  WHERE d.classid = 'pg_rewrite'::regclass
                    AND d.refobjid = 'redrive.audit_log'::regclass);
CREATE TEMPORARY TABLE audit_grant ON COMMIT DROP AS
SELECT a.grantee, a.privilege_type, a.is_grantable
  FROM pg_class c, aclexplode(c.relacl) a
 WHERE c.oid = 'redrive.audit_log'::regclass AND a.grantee <> c.relowner;
CREATE TEMPORARY TABLE audit_function_grant ON COMMIT DROP AS
SELECT p.proname::text AS name, a.grantee, a.is_grantable
  FROM pg_proc p, aclexplode(p.proacl) a
 WHERE p.oid IN ('redrive.audit_canonical(redrive.audit_log)'::regprocedure,
                 'redrive.audit_entry_hash(bytea, redrive.audit_log)'::regprocedure,
                 'redrive.audit_worker_change(text, text, uuid, jsonb, jsonb, jsonb, text)'::regprocedure)
   AND a.grantee <> p.proowner AND a.privilege_type = 'EXECUTE';

-- The functions bound to the old table (its row type, or its name in a function body parsed at
-- creation) go, and come back below with the same text.
DROP FUNCTION redrive.audit_worker_change(text, text, uuid, jsonb, jsonb, jsonb, text);
DROP FUNCTION redrive.audit_entry_hash(bytea, redrive.audit_log);
DROP FUNCTION redrive.audit_canonical(redrive.audit_log);

ALTER TABLE redrive.audit_log RENAME TO audit_log_unpartitioned;
ALTER INDEX redrive.audit_log_pkey RENAME TO audit_log_unpartitioned_pkey;
ALTER INDEX redrive.audit_log_at_idx RENAME TO audit_log_unpartitioned_at_idx;
ALTER INDEX redrive.audit_log_action_id_idx RENAME TO audit_log_unpartitioned_action_id_idx;
ALTER INDEX redrive.audit_log_actor_idx RENAME TO audit_log_unpartitioned_actor_idx;
ALTER INDEX redrive.audit_log_targets_idx RENAME TO audit_log_unpartitioned_targets_idx;
ALTER INDEX redrive.audit_log_mention_trgm_idx RENAME TO audit_log_unpartitioned_mention_trgm_idx;

-- Migration 1's columns; the primary key includes the partition key, as PostgreSQL requires (an
-- id is still unique: the chain trigger draws it from audit_log_id_seq).
CREATE TABLE redrive.audit_log (
    id             bigint      NOT NULL,
    at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    db_user        text        NOT NULL DEFAULT session_user,
    client_addr    inet        DEFAULT inet_client_addr(),
    os_user        text,
    action         text        NOT NULL,
    targets        jsonb       NOT NULL DEFAULT '[]',
    reason         text        NOT NULL,
    ticket         text,
    before         jsonb,
    after          jsonb,
    action_id      uuid        NOT NULL,
    outcome        jsonb       NOT NULL DEFAULT '{}',
    prev_hash      bytea,
    hash           bytea,
    PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);
COMMENT ON TABLE redrive.audit_log IS 'Append-only audit entries; hash = sha256(prev_hash || canonical entry); partitioned by UTC month of at (docs/architecture.md "Partitions")';
CREATE TABLE redrive.audit_log_default PARTITION OF redrive.audit_log DEFAULT;
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON redrive.audit_log_default
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.audit_log_refuse_change();
-- The grants first: each month created below gets the same (see ensure_month_partition).
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM pg_temp.audit_grant LOOP
        EXECUTE format('GRANT %s ON redrive.audit_log TO %s%s', r.privilege_type,
                       CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END,
                       CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
        EXECUTE format('GRANT %s ON redrive.audit_log_default TO %s', r.privilege_type,
                       CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END);
    END LOOP;
END
$$;

-- A month for every month that holds entries, this one and three ahead.
SELECT redrive.ensure_month_partition('audit_log', 'at', m)
  FROM (SELECT DISTINCT date_trunc('month', at, 'UTC') AS m
          FROM redrive.audit_log_unpartitioned
         WHERE isfinite(at)
        UNION
        SELECT (date_trunc('month', clock_timestamp(), 'UTC') AT TIME ZONE 'UTC'
                + make_interval(months => g)) AT TIME ZONE 'UTC'
          FROM generate_series(0, 3) g) months
 ORDER BY m;

-- Every entry as it is, in id order; no trigger exists yet, so nothing is re-chained.
INSERT INTO redrive.audit_log (id, at, db_user, client_addr, os_user, action, targets, reason,
                               ticket, before, after, action_id, outcome, prev_hash, hash)
SELECT id, at, db_user, client_addr, os_user, action, targets, reason, ticket, before, after,
       action_id, outcome, prev_hash, hash
  FROM redrive.audit_log_unpartitioned
 ORDER BY id;

CREATE INDEX audit_log_at_idx ON redrive.audit_log (at DESC, id DESC);
CREATE INDEX audit_log_action_id_idx ON redrive.audit_log (action_id);
CREATE INDEX audit_log_actor_idx ON redrive.audit_log (db_user, at DESC);
CREATE INDEX audit_log_targets_idx ON redrive.audit_log USING gin (targets jsonb_path_ops);
CREATE INDEX audit_log_mention_trgm_idx ON redrive.audit_log
    USING gin ((coalesce(targets::text, '') || E'\x1f' || coalesce(before::text, '') || E'\x1f'
                || coalesce(after::text, '') || E'\x1f' || coalesce(outcome::text, '')
                || E'\x1f' || coalesce(reason, '') || E'\x1f' || coalesce(ticket, ''))
               public.gin_trgm_ops);

-- Migration 3's canonical form and hash, on the new row type (same text).
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

-- Migration 7's worker entry (same text).
CREATE FUNCTION redrive.audit_worker_change(p_worker text, p_action text, p_action_id uuid,
                                            p_targets jsonb, p_before jsonb, p_after jsonb,
                                            p_reason text) RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    INSERT INTO redrive.audit_log (os_user, action, targets, reason, before, after, action_id,
                                   outcome)
    VALUES (p_worker, p_action, p_targets, p_reason, p_before, p_after,
            coalesce(p_action_id, gen_random_uuid()),
            jsonb_build_object('actor', 'worker', 'worker_id', p_worker));
END;

-- The chain trigger of migration 7, with one change: a row trigger on a partitioned table fires
-- on the partition the row was routed to by its at, and may not move it to another one. So the
-- entry's time is the server's clock when it is chained, as before, unless that crossed into
-- the next month while the entry waited for the chain (then the time it was formed, a moment
-- earlier, stays); and a time given by the writer instead of the column's default is refused,
-- as it was overwritten before.
CREATE OR REPLACE FUNCTION redrive.audit_log_chain() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '10s'
AS $$
DECLARE
    v_prev bytea;
    v_now timestamptz;
BEGIN
    PERFORM 1 FROM redrive.audit_chain_lock FOR UPDATE;
    v_now := clock_timestamp();
    IF NEW.at IS NULL OR NEW.at < statement_timestamp() OR NEW.at > v_now THEN
        RAISE EXCEPTION 'an audit entry''s time is the server''s clock: leave at to its default'
              USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF date_trunc('month', v_now, 'UTC') = date_trunc('month', NEW.at, 'UTC') THEN
        NEW.at := v_now;
    END IF;
    NEW.id := nextval('redrive.audit_log_id_seq');
    SELECT hash INTO v_prev FROM redrive.audit_log ORDER BY id DESC LIMIT 1;
    NEW.db_user := session_user;
    NEW.client_addr := inet_client_addr();
    NEW.prev_hash := v_prev;
    NEW.hash := redrive.audit_entry_hash(v_prev, NEW);
    RETURN NEW;
END
$$;

-- Migration 1's and 3's triggers, on the partitioned table.
CREATE TRIGGER audit_log_chain
    BEFORE INSERT ON redrive.audit_log
    FOR EACH ROW EXECUTE FUNCTION redrive.audit_log_chain();
CREATE TRIGGER audit_log_no_update_delete
    BEFORE UPDATE OR DELETE ON redrive.audit_log
    FOR EACH ROW EXECUTE FUNCTION redrive.audit_log_refuse_change();
CREATE TRIGGER audit_log_no_truncate
    BEFORE TRUNCATE ON redrive.audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.audit_log_refuse_change();

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM pg_temp.audit_dependent_view LOOP
        EXECUTE format('CREATE OR REPLACE VIEW %s%s AS %s', r.name,
                       CASE WHEN r.options <> '' THEN ' WITH (' || r.options || ')' ELSE '' END,
                       r.definition);
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION redrive.audit_canonical(redrive.audit_log),
                       redrive.audit_entry_hash(bytea, redrive.audit_log),
                       redrive.audit_worker_change(text, text, uuid, jsonb, jsonb, jsonb, text)
    FROM PUBLIC;
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM pg_temp.audit_function_grant LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s%s',
                       CASE r.name
                           WHEN 'audit_canonical' THEN 'redrive.audit_canonical(redrive.audit_log)'
                           WHEN 'audit_entry_hash'
                               THEN 'redrive.audit_entry_hash(bytea, redrive.audit_log)'
                           ELSE 'redrive.audit_worker_change(text, text, uuid, jsonb, jsonb,'
                                ' jsonb, text)' END,
                       CASE WHEN r.grantee = 0 THEN 'PUBLIC' ELSE r.grantee::regrole::text END,
                       CASE WHEN r.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
END
$$;

DROP TABLE redrive.audit_log_unpartitioned;
