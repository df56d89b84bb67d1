-- SPDX-License-Identifier: GPL-3.0-or-later
-- Redrive native schema, version 14: failure groups kept as a rollup, and the safe-to-retry
-- verdict for a whole set of dead letters in one query (docs/domain.md#failure-groups).
--
-- The rollup holds, per failure group, how many of its dead letters are in each status, the
-- first and last dead_at among them, whether the group regressed (it was all resolved and failed
-- again), and per UTC hour how many of its dead letters died in that hour. It is kept exact by
-- the same transaction that changes redrive.dead_letter: statement-level AFTER triggers read
-- the statement's transition tables and apply one change per group and statement (a 1,000-row
-- requeue of one group is one row update, not a thousand; a per-row update of one hot row made
-- bulk inserts quadratic before). Groups are changed in fingerprint order, so two statements
-- over the same groups take their row locks in the same order.

CREATE TABLE redrive.failure_group_rollup (
    fingerprint          text PRIMARY KEY REFERENCES redrive.failure_group (fingerprint),
    open_count           bigint NOT NULL DEFAULT 0 CHECK (open_count >= 0),
    requeued_count       bigint NOT NULL DEFAULT 0 CHECK (requeued_count >= 0),
    resolved_count       bigint NOT NULL DEFAULT 0 CHECK (resolved_count >= 0),
    compensation_pending_count bigint NOT NULL DEFAULT 0
                         CHECK (compensation_pending_count >= 0),
    compensating_count   bigint NOT NULL DEFAULT 0 CHECK (compensating_count >= 0),
    compensated_count    bigint NOT NULL DEFAULT 0 CHECK (compensated_count >= 0),
    first_dead_at        timestamptz,
    last_dead_at         timestamptz,
    -- When the group last became resolved: none of its dead letters open, requeued or in
    -- compensation, at least one resolved or compensated (the transaction's time).
    resolved_at          timestamptz,
    -- The dead_at of the first dead letter that arrived open in a resolved group; NULL when the
    -- group is not a regression (never resolved, or resolved again since).
    regressed_at         timestamptz
);
COMMENT ON TABLE redrive.failure_group_rollup IS 'Per failure group: dead letters per status, first and last dead_at, resolved and regression times; kept by statement-level triggers on redrive.dead_letter (docs/domain.md#failure-groups)';

CREATE TABLE redrive.failure_group_hour (
    fingerprint  text        NOT NULL REFERENCES redrive.failure_group (fingerprint),
    hour         timestamptz NOT NULL,
    dead_letters bigint      NOT NULL,
    PRIMARY KEY (fingerprint, hour)
);
COMMENT ON TABLE redrive.failure_group_hour IS 'Per failure group and UTC hour of dead_at: how many of its dead letters died then (a row that reaches 0 is deleted by the same statement)';

-- One change of one dead letter's place: +1 where it is now, -1 where it was.
CREATE TYPE redrive.failure_group_change AS (
    fingerprint text,
    status      text,
    dead_at     timestamptz,
    delta       integer
);

CREATE FUNCTION redrive.apply_failure_group_changes(p_changes redrive.failure_group_change[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce(cardinality(p_changes), 0) = 0 THEN
        RETURN;
    END IF;
    -- Every group of the statement gets its row, then the rows are locked in fingerprint order
    -- (the same order in every session, so two statements over the same groups cannot
    -- deadlock on them) and changed once each.
    INSERT INTO redrive.failure_group_rollup (fingerprint)
    SELECT DISTINCT c.fingerprint FROM unnest(p_changes) c ORDER BY 1
    ON CONFLICT (fingerprint) DO NOTHING;
    PERFORM 1 FROM redrive.failure_group_rollup r
     WHERE r.fingerprint IN (SELECT c.fingerprint FROM unnest(p_changes) c)
     ORDER BY r.fingerprint FOR UPDATE;
    WITH g AS (SELECT c.fingerprint,
                      coalesce(sum(c.delta) FILTER (WHERE c.status = 'open'), 0) AS d_open,
                      coalesce(sum(c.delta) FILTER (WHERE c.status = 'requeued'), 0) AS d_requeued,
                      coalesce(sum(c.delta) FILTER (WHERE c.status = 'resolved'), 0) AS d_resolved,
                      coalesce(sum(c.delta) FILTER (WHERE c.status = 'compensation_pending'), 0)
                          AS d_pending,
                      coalesce(sum(c.delta) FILTER (WHERE c.status = 'compensating'), 0)
                          AS d_compensating,
                      coalesce(sum(c.delta) FILTER (WHERE c.status = 'compensated'), 0)
                          AS d_compensated,
                      min(c.dead_at) FILTER (WHERE c.delta > 0) AS min_in,
                      max(c.dead_at) FILTER (WHERE c.delta > 0) AS max_in,
                      min(c.dead_at) FILTER (WHERE c.delta > 0 AND c.status = 'open')
                          AS open_in
                 FROM unnest(p_changes) c GROUP BY c.fingerprint),
         n AS (SELECT r.fingerprint,
                      r.open_count + r.requeued_count + r.compensation_pending_count
                          + r.compensating_count AS was_unfinished,
                      r.resolved_count + r.compensated_count AS was_finished,
                      r.open_count + g.d_open + r.requeued_count + g.d_requeued
                          + r.compensation_pending_count + g.d_pending + r.compensating_count
                          + g.d_compensating AS unfinished,
                      r.resolved_count + g.d_resolved + r.compensated_count + g.d_compensated
                          AS finished,
                      g.d_open, g.d_requeued, g.d_resolved, g.d_pending, g.d_compensating,
                      g.d_compensated, g.min_in, g.max_in, g.open_in
                 FROM redrive.failure_group_rollup r JOIN g ON g.fingerprint = r.fingerprint)
    UPDATE redrive.failure_group_rollup r
       SET open_count = r.open_count + n.d_open,
           requeued_count = r.requeued_count + n.d_requeued,
           resolved_count = r.resolved_count + n.d_resolved,
           compensation_pending_count = r.compensation_pending_count + n.d_pending,
           compensating_count = r.compensating_count + n.d_compensating,
           compensated_count = r.compensated_count + n.d_compensated,
           first_dead_at = least(r.first_dead_at, n.min_in),
           last_dead_at = greatest(r.last_dead_at, n.max_in),
           -- resolved now: nothing unfinished, something finished, and before it was not so
           resolved_at = CASE WHEN n.unfinished = 0 AND n.finished > 0
                                   AND NOT (n.was_unfinished = 0 AND n.was_finished > 0)
                              THEN now() ELSE r.resolved_at END,
           regressed_at = CASE
               -- nothing unfinished any more: resolved again, no longer a regression
               WHEN n.unfinished = 0 THEN NULL
               -- it was resolved and a dead letter arrives open: a regression from then on
               WHEN r.regressed_at IS NULL AND n.was_unfinished = 0 AND n.was_finished > 0
                    AND n.open_in IS NOT NULL THEN n.open_in
               ELSE r.regressed_at END
      FROM n
     WHERE r.fingerprint = n.fingerprint;

    -- First and last seen after dead letters left a group (moved to another, or deleted): two
    -- probes of dead_letter_group_recent_idx per group.
    UPDATE redrive.failure_group_rollup r
       SET first_dead_at = (SELECT min(d.dead_at) FROM redrive.dead_letter d
                             WHERE d.fingerprint = r.fingerprint),
           last_dead_at = (SELECT max(d.dead_at) FROM redrive.dead_letter d
                            WHERE d.fingerprint = r.fingerprint)
     WHERE r.fingerprint IN (SELECT DISTINCT c.fingerprint FROM unnest(p_changes) c
                              WHERE c.delta < 0);

    -- Per hour: only dead letters that arrived in or left a group, or changed dead_at, count.
    WITH h AS (SELECT c.fingerprint, date_trunc('hour', c.dead_at, 'UTC') AS hour,
                      sum(c.delta) AS delta
                 FROM unnest(p_changes) c
                GROUP BY 1, 2 HAVING sum(c.delta) <> 0)
    INSERT INTO redrive.failure_group_hour AS x (fingerprint, hour, dead_letters)
    SELECT h.fingerprint, h.hour, h.delta FROM h ORDER BY h.fingerprint, h.hour
    ON CONFLICT (fingerprint, hour) DO UPDATE SET dead_letters = x.dead_letters + EXCLUDED.dead_letters;
    DELETE FROM redrive.failure_group_hour x
     WHERE x.dead_letters = 0
       AND (x.fingerprint, x.hour) IN (SELECT c.fingerprint, date_trunc('hour', c.dead_at, 'UTC')
                                         FROM unnest(p_changes) c WHERE c.delta < 0);
END
$$;

CREATE FUNCTION redrive.failure_group_rollup_inserted() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM redrive.apply_failure_group_changes(
        (SELECT array_agg(ROW(n.fingerprint, n.status, n.dead_at, 1)::redrive.failure_group_change)
           FROM new_rows n));
    RETURN NULL;
END
$$;

CREATE FUNCTION redrive.failure_group_rollup_updated() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM redrive.apply_failure_group_changes(
        (SELECT array_agg(x.c)
           FROM (SELECT ROW(o.fingerprint, o.status, o.dead_at, -1)::redrive.failure_group_change AS c
                   FROM old_rows o JOIN new_rows n ON n.id = o.id
                  WHERE (o.fingerprint, o.status, o.dead_at)
                        IS DISTINCT FROM (n.fingerprint, n.status, n.dead_at)
                 UNION ALL
                 SELECT ROW(n.fingerprint, n.status, n.dead_at, 1)::redrive.failure_group_change
                   FROM old_rows o JOIN new_rows n ON n.id = o.id
                  WHERE (o.fingerprint, o.status, o.dead_at)
                        IS DISTINCT FROM (n.fingerprint, n.status, n.dead_at)) x));
    RETURN NULL;
END
$$;

CREATE FUNCTION redrive.failure_group_rollup_deleted() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM redrive.apply_failure_group_changes(
        (SELECT array_agg(ROW(o.fingerprint, o.status, o.dead_at, -1)::redrive.failure_group_change)
           FROM old_rows o));
    RETURN NULL;
END
$$;

CREATE TRIGGER failure_group_rollup_inserted
    AFTER INSERT ON redrive.dead_letter REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.failure_group_rollup_inserted();
CREATE TRIGGER failure_group_rollup_updated
    AFTER UPDATE ON redrive.dead_letter REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.failure_group_rollup_updated();
CREATE TRIGGER failure_group_rollup_deleted
    AFTER DELETE ON redrive.dead_letter REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.failure_group_rollup_deleted();

-- TRUNCATE of the dead letters (the owner's, e.g. between tests) empties the rollup with them.
CREATE FUNCTION redrive.dead_letter_truncated() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM redrive.failure_group_hour;
    DELETE FROM redrive.failure_group_rollup;
    RETURN NULL;
END
$$;
CREATE TRIGGER dead_letter_truncated
    AFTER TRUNCATE ON redrive.dead_letter
    FOR EACH STATEMENT EXECUTE FUNCTION redrive.dead_letter_truncated();

-- The dead letters already there, counted once.
INSERT INTO redrive.failure_group_rollup
       (fingerprint, open_count, requeued_count, resolved_count, compensation_pending_count,
        compensating_count, compensated_count, first_dead_at, last_dead_at, resolved_at)
SELECT d.fingerprint,
       count(*) FILTER (WHERE d.status = 'open'),
       count(*) FILTER (WHERE d.status = 'requeued'),
       count(*) FILTER (WHERE d.status = 'resolved'),
       count(*) FILTER (WHERE d.status = 'compensation_pending'),
       count(*) FILTER (WHERE d.status = 'compensating'),
       count(*) FILTER (WHERE d.status = 'compensated'),
       min(d.dead_at), max(d.dead_at),
       CASE WHEN bool_and(d.status IN ('resolved', 'compensated')) THEN max(d.resolved_at) END
  FROM redrive.dead_letter d
 GROUP BY d.fingerprint;
INSERT INTO redrive.failure_group_hour (fingerprint, hour, dead_letters)
SELECT d.fingerprint, date_trunc('hour', d.dead_at, 'UTC'), count(*)
  FROM redrive.dead_letter d
 GROUP BY 1, 2;

-- The failure groups as the console lists them: the group, its rollup, and its name (error code
-- and normalized message; docs/domain.md#failure-groups). Native only: a source adapter's groups
-- are counted from its dead_letter_list.
CREATE VIEW redrive.failure_group_rollup_list AS
SELECT g.fingerprint, g.kind, g.error_class, g.error_code, g.sample_message,
       redrive.normalize_error_message(split_part(g.sample_message, E'\n', 1)) AS normalized_message,
       r.open_count, r.requeued_count, r.resolved_count, r.compensation_pending_count,
       r.compensating_count, r.compensated_count,
       r.open_count + r.requeued_count + r.resolved_count + r.compensation_pending_count
           + r.compensating_count + r.compensated_count AS dead_letters,
       r.first_dead_at, r.last_dead_at, r.resolved_at, r.regressed_at
  FROM redrive.failure_group_rollup r JOIN redrive.failure_group g USING (fingerprint);

CREATE VIEW redrive.failure_group_hour_list AS
SELECT h.fingerprint, h.hour, h.dead_letters FROM redrive.failure_group_hour h
 WHERE h.dead_letters > 0;

-- ---------------------------------------------------------------------------------------------
-- The safe-to-retry verdict of a set of dead letters in one query: the same rows as
-- retry_verdict(id) for each id (tests/db/tst_failure_groups.cpp compares both over the demo
-- world, row by row), with the dead letter's id first. Each rule is one join over the set instead
-- of one function call per dead letter.
CREATE FUNCTION redrive.retry_verdicts(p_dead_letters bigint[])
RETURNS TABLE (dead_letter_id bigint, severity text, code text, explanation text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS MATERIALIZED (
        SELECT dl.id, dl.kind, dl.idempotency_key, dl.error_class, dl.error_code, j.entity_id,
               j.event_seq, j.state AS job_state, j.locked_until, j.locked_by, j.kind AS job_kind
          FROM redrive.dead_letter dl JOIN redrive.job j ON j.id = dl.job_id
         WHERE dl.id IN (SELECT unnest(p_dead_letters)))
    SELECT d.id, 'block', 'job_leased',
           format('The job is still leased by %s until %s: it may be running right now.',
                  d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until > clock_timestamp()
    UNION ALL
    SELECT d.id, 'warn', 'lease_expired',
           format('The job''s lease (held by %s) expired at %s without a result; its last '
                  'attempt may have had an effect.', d.locked_by, d.locked_until)
      FROM d WHERE d.job_state = 'running' AND d.locked_until <= clock_timestamp()
    UNION ALL
    SELECT d.id, 'warn', 'key_done',
           format('Idempotency key %s is already done: a retry would return the stored result '
                  'and do nothing.', k.key)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'done'
    UNION ALL
    SELECT d.id, 'warn', 'key_stuck',
           format('Idempotency key %s is stuck in processing since %s: the side effect may '
                  'have happened.', k.key, k.updated_at)
      FROM d JOIN redrive.idempotency_key k ON k.scope = d.kind AND k.key = d.idempotency_key
     WHERE k.state = 'processing'
    UNION ALL
    SELECT d.id, 'block', 'key_reused',
           'The idempotency key was used for a different request: retrying cannot succeed.'
      FROM d WHERE d.error_code = 'idempotency_key_reuse'
    UNION ALL
    SELECT d.id, 'warn', 'provider_has_charge',
           format('Reconciliation found a %s mismatch for %s: the provider may already have the '
                  'charge.', m.kind, m.payment_ref)
      FROM d JOIN redrive.reconciliation_mismatch m ON m.payment_ref = d.entity_id
     WHERE m.status <> 'resolved' AND m.kind IN ('missing_internal', 'duplicate_external')
    UNION ALL
    SELECT d.id, 'warn', 'newer_event_processed',
           format('A newer event for %s (sequence %s) succeeded after this one (sequence %s): '
                  'replaying this one could move the entity backwards.',
                  d.entity_id, max(n.event_seq), d.event_seq)
      FROM d JOIN redrive.job n ON n.entity_id = d.entity_id AND n.kind = d.job_kind
                              AND n.event_seq > d.event_seq AND n.state = 'succeeded'
     GROUP BY d.id, d.entity_id, d.event_seq
    UNION ALL
    SELECT d.id, 'warn', 'ambiguous',
           'The last failure was ambiguous: the side effect may have happened. Check the '
           'receiving side before requeueing.'
      FROM d WHERE d.error_class = 'ambiguous'
    UNION ALL
    SELECT d.id, 'block', 'permanent',
           format('The last failure was permanent (%s): retrying unchanged will fail again.',
                  d.error_code)
      FROM d WHERE d.error_class = 'permanent' AND d.error_code <> 'idempotency_key_reuse'
$$;

REVOKE ALL ON FUNCTION redrive.apply_failure_group_changes(redrive.failure_group_change[]),
                       redrive.failure_group_rollup_inserted(),
                       redrive.failure_group_rollup_updated(),
                       redrive.failure_group_rollup_deleted(),
                       redrive.dead_letter_truncated(),
                       redrive.retry_verdicts(bigint[])
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION redrive.retry_verdicts(bigint[])
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver;
GRANT SELECT ON redrive.failure_group_rollup_list, redrive.failure_group_hour_list,
                redrive.failure_group_rollup, redrive.failure_group_hour
    TO redrive_auditor, redrive_oncall, redrive_support, redrive_approver, redrive_worker;
