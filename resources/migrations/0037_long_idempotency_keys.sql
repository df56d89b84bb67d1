-- SPDX-License-Identifier: GPL-3.0-or-later
-- An idempotency key of any length (docs/domain.md, "Idempotency key record").
--
-- A client chooses its idempotency key, and the HTTP header that carries it sets no length
-- limit. A btree index entry must fit in a third of a page, so a key over about 2,700 bytes
-- could not be stored: the primary key (scope, key) of redrive.idempotency_key, the keys list's
-- index (updated_at, scope, key) and redrive.job's index on its key refused the row ("index row
-- size ... exceeds btree version 4 maximum"), and the job or the request failed for its key.
--
-- Now no btree holds a key itself; the key column stays whole (never truncated):
-- - uniqueness is a unique index on (scope, SHA-256 of the key's UTF-8 bytes);
-- - every lookup by key (scope = $1 AND key = $2, the joins from a dead letter to its key
--   record, the frozen pass's rows) finds it through a hash index on the key, which stores a
--   32-bit hash whatever the key's length, so none of those statements changes;
-- - the keys list's keyset index ends at scope; rows tied on (updated_at, scope) are ordered by
--   key after the index scan;
-- - redrive.job's index on its key is a hash index too.
-- begin_idempotent()'s ON CONFLICT names the new unique index's columns.

-- The digest a key is unique by: SHA-256 of its UTF-8 bytes (32 bytes, whatever the key's
-- length). Declared immutable although PostgreSQL marks convert_to() stable (its result depends
-- on the database's encoding): a database's encoding never changes, so the same text always
-- gives the same bytes, as a unique index needs.
CREATE FUNCTION redrive.idempotency_key_digest(p_key text) RETURNS bytea
LANGUAGE sql
IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
RETURN sha256(convert_to(p_key, 'UTF8'));
COMMENT ON FUNCTION redrive.idempotency_key_digest(text) IS
    'SHA-256 of an idempotency key''s UTF-8 bytes: what a key is unique by within its scope, whatever its length (docs/domain.md "Idempotency key record")';

ALTER TABLE redrive.idempotency_key DROP CONSTRAINT idempotency_key_pkey;
CREATE UNIQUE INDEX idempotency_key_digest_key
    ON redrive.idempotency_key (scope, redrive.idempotency_key_digest(key));
CREATE INDEX idempotency_key_key_hash_idx ON redrive.idempotency_key USING hash (key);

DROP INDEX redrive.idempotency_key_updated_idx;
CREATE INDEX idempotency_key_updated_idx ON redrive.idempotency_key (updated_at DESC, scope DESC);

DROP INDEX redrive.job_idempotency_key_idx;
CREATE INDEX job_idempotency_key_idx ON redrive.job USING hash (idempotency_key);

-- Migration 7's function; only its ON CONFLICT changed (the unique index above).
CREATE OR REPLACE FUNCTION redrive.begin_idempotent(p_scope text, p_key text, p_request_hash text,
                                         p_job bigint, p_worker text, p_lease_ms integer,
                                         p_now timestamptz DEFAULT NULL,
                                         OUT verdict text, OUT result jsonb)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_now timestamptz := least(coalesce(p_now, clock_timestamp()), clock_timestamp() + interval '1 minute');
    v_lease timestamptz := v_now + p_lease_ms * interval '1 millisecond';
    v_rec redrive.idempotency_key%ROWTYPE;
BEGIN
    INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id, locked_by,
                                         locked_login, locked_until, created_at, updated_at,
                                         expires_at)
    VALUES (p_scope, p_key, p_request_hash, 'processing', p_job, p_worker, session_user,
            v_lease, v_now, v_now, v_now + interval '7 days')
    ON CONFLICT (scope, redrive.idempotency_key_digest(key)) DO NOTHING;
    IF FOUND THEN
        verdict := 'proceed';
        RETURN;
    END IF;

    SELECT * INTO v_rec FROM redrive.idempotency_key
     WHERE scope = p_scope AND key = p_key FOR UPDATE;
    IF v_rec.request_hash <> p_request_hash THEN
        UPDATE redrive.idempotency_key
           SET conflicting_hash = p_request_hash, conflict_count = conflict_count + 1,
               last_conflict_at = v_now, version = version + 1
         WHERE scope = p_scope AND key = p_key;
        verdict := 'mismatch';
    ELSIF v_rec.state = 'done' THEN
        verdict := 'replay';
        result := v_rec.result;
    -- A live lease is never taken over by naming a later "now".
    ELSIF v_rec.state = 'processing' AND v_rec.locked_until > least(v_now, clock_timestamp()) THEN
        verdict := 'conflict';
    ELSE
        verdict := CASE WHEN v_rec.state = 'processing' THEN 'takeover' ELSE 'proceed' END;
        UPDATE redrive.idempotency_key
           SET state = 'processing', locked_by = p_worker, locked_login = session_user,
               locked_until = v_lease,
               job_id = coalesce(p_job, job_id), updated_at = v_now, version = version + 1
         WHERE scope = p_scope AND key = p_key;
    END IF;
END
$$;
