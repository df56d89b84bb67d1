#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Upgrading a database that holds attempts and audit entries to partitioned attempts and audit
# log (migrations 28 to 30, docs/architecture.md#partitions): every attempt keeps its id and
# columns, in the month partition of its started_at; the identity goes on where it stood; the case
# view's history (redrive.attempt_history) and the overview's rollups read the same before and
# after; the roles keep reading; the audit chain verifies before and after with the same head and
# entry count, each entry in its month, and goes on; `redrive maintain` creates the coming months
# once, and moves a month's attempts out of the default partition when it creates that month.
#   cli_upgrade_partitions.sh PGTEST_DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=$1
redrive=$2
migrations="$(cd "$(dirname "$0")/../../resources/migrations" && pwd)"
set -a
. "$dir/env"
set +a
db="t_cli_upgrade_partitions_$$"
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db"
cleanup() {
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
run() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
fail() { echo "cli_upgrade_partitions: $*"; exit 1; }

# Every migration before 28, as `redrive migrate` of the previous release left them.
run -c "CREATE SCHEMA redrive" -c "CREATE TABLE redrive.schema_version (
            version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            applied_by text NOT NULL DEFAULT session_user)"
for file in "$migrations"/00*.sql; do
    base=$(basename "$file" .sql)
    version=$((10#${base%%_*}))
    [ "$version" -lt 28 ] || continue
    run -1 -f "$file" >/dev/null
    run -c "INSERT INTO redrive.schema_version (version, name, checksum)
            VALUES ($version, '${base#*_}', '$(sha256sum "$file" | cut -d' ' -f1)')"
done
before_version=$(run -c 'SELECT max(version) FROM redrive.schema_version')
[ "$before_version" -lt 28 ] || fail "not before version 28"

# Three dead jobs with 4 attempts each, ten days apart from 2026-01-31 23:30 UTC (so one in
# January, two in February and one in March 2026), one attempt far ahead (2031-07-04), and an aborted insert that used
# up id 14 of the identity.
run -c "WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, created_at)
                   SELECT 'emails', 'send', '{}', 'dead', '2026-01-31 23:00:00+00'
                     FROM generate_series(1, 3) RETURNING id, queue, kind)
        INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error)
        SELECT id, queue, kind, 'transient', 'smtp_421', 'try later' FROM j"
run -c "INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,
                                     error_class, error_code, message, worker_id, backoff_ms)
        SELECT j.id, g, timestamptz '2026-01-31 23:30:00+00' + make_interval(days => 10 * (g - 1)),
               timestamptz '2026-01-31 23:30:01.5+00' + make_interval(days => 10 * (g - 1)),
               'failed', 'transient', 'smtp_421', 'try later #' || g, 'w-' || j.id, 1000 * g
          FROM redrive.job j, generate_series(1, 4) g ORDER BY j.id, g"
run -c "INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome, error_class)
        SELECT min(id), 5, '2031-07-04 12:00:00+00', 'failed', 'transient' FROM redrive.job"
run -c "BEGIN" -c "INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome, error_class)
        SELECT min(id), 6, '2026-03-01 00:00:00+00', 'failed', 'transient' FROM redrive.job" \
    -c "ROLLBACK"
# Audit entries: four chained by the owner in October and November 2026 (the trigger set aside,
# each hashed as the trigger would), then three through the trigger, now.
run -c "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_chain" -c "
DO \$\$
DECLARE
    e redrive.audit_log;
    prev bytea;
BEGIN
    FOR i IN 1 .. 4 LOOP
        e := ROW(nextval('redrive.audit_log_id_seq'),
                 timestamptz '2026-10-30 08:00:00+00' + make_interval(days => 2 * (i - 1)),
                 'alice', '10.0.0.7', 'alice@laptop', 'note',
                 jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', i)),
                 'entry ' || i, NULL, NULL, NULL, gen_random_uuid(), '{}', prev, NULL)
             ::redrive.audit_log;
        e.prev_hash := prev;
        e.hash := redrive.audit_entry_hash(prev, e);
        INSERT INTO redrive.audit_log SELECT (e).*;
        prev := e.hash;
    END LOOP;
END
\$\$" -c "ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_chain"
run -c "INSERT INTO redrive.audit_log (action, reason, action_id)
        SELECT 'note', 'now ' || g, gen_random_uuid() FROM generate_series(1, 3) g"
audit_before=$("$redrive" verify-audit --conninfo "dbname=$db") || fail "the chain does not verify before"
echo "$audit_before" | grep "audit chain OK: 7 entries verified" >/dev/null \
    || fail "not 7 entries verified before: $audit_before"
entries_before=$(run -c "SELECT string_agg(e::text, '|' ORDER BY e.id) FROM redrive.audit_log e")
dl=$(run -c "SELECT min(id) FROM redrive.dead_letter")
all_before=$(run -c "SELECT string_agg(a::text, '|' ORDER BY a.id) FROM redrive.attempt a")
history_before=$(run -c "SELECT string_agg(h::text, '|' ORDER BY h.started_at, h.id)
                           FROM redrive.attempt_history h WHERE h.dead_letter_id = $dl")
rollup_before=$(run -c "SELECT string_agg(r::text, '|' ORDER BY r.series, r.grain_s, r.bucket, r.key)
                          FROM redrive.bucket_rollup r")
[ "$(run -c "SELECT count(*) || ' ' || string_agg(id::text, ',' ORDER BY id) FROM redrive.attempt")" \
    = "13 1,2,3,4,5,6,7,8,9,10,11,12,13" ] || fail "not the 13 attempts 1..13 before"
[ "$(run -c "SELECT count(*) FROM redrive.attempt_history WHERE dead_letter_id = $dl")" = 5 ] \
    || fail "the case view does not read 5 attempts before"

"$redrive" migrate --conninfo "dbname=$db" | tee /dev/stderr | grep " 0028" >/dev/null \
    || fail "migration 28 not reported"
[ "$(run -c "SELECT relkind FROM pg_class WHERE oid = 'redrive.attempt'::regclass")" = p ] \
    || fail "redrive.attempt is not partitioned"

# The same audit chain: the same head and count, every entry byte for byte, each in its month.
[ "$(run -c "SELECT relkind FROM pg_class WHERE oid = 'redrive.audit_log'::regclass")" = p ] \
    || fail "redrive.audit_log is not partitioned"
audit_after=$("$redrive" verify-audit --conninfo "dbname=$db") || fail "the chain does not verify after"
[ "$audit_after" = "$audit_before" ] || fail "verify-audit says otherwise after: $audit_after"
[ "$(run -c "SELECT string_agg(e::text, '|' ORDER BY e.id) FROM redrive.audit_log e")" \
    = "$entries_before" ] || fail "an audit entry changed"
this_month=$(date -u +%Y_%m)
[ "$(run -c "SELECT string_agg(e.id || ':' || e.tableoid::regclass::text, ' ' ORDER BY e.id)
               FROM redrive.audit_log e WHERE e.reason LIKE 'entry %'")" \
    = "1:redrive.audit_log_2026_10 2:redrive.audit_log_2026_11 3:redrive.audit_log_2026_11 4:redrive.audit_log_2026_11" ] \
    || fail "the October and November entries are not in their months"
[ "$(run -c "SELECT count(*) FROM redrive.audit_log
              WHERE reason LIKE 'now %' AND tableoid = 'redrive.audit_log_$this_month'::regclass")" = 3 ] \
    || fail "this month's entries are not in this month's partition"
# The chain goes on from the same head, through the worker's function too; a time the writer
# gives is refused.
run -c "SELECT redrive.audit_worker_change('w-1', 'outbox_done', NULL, '[]', NULL, NULL, 'done')" >/dev/null
[ "$(run -c "SELECT e.id || ' ' || (e.prev_hash = p.hash)::text FROM redrive.audit_log e
               JOIN redrive.audit_log p ON p.id = 7 WHERE e.id = 8")" = "8 true" ] \
    || fail "entry 8 does not follow entry 7"
run -c "INSERT INTO redrive.audit_log (at, action, reason, action_id)
        VALUES ('2020-01-01 00:00:00+00', 'note', 'backdated', gen_random_uuid())" >/dev/null 2>&1 \
    && fail "a backdated audit entry was accepted"
"$redrive" verify-audit --conninfo "dbname=$db" | grep "audit chain OK: 8 entries verified" >/dev/null \
    || fail "not 8 entries verified after the new one"

# The same 13 rows with the same ids and columns, each in its month.
[ "$(run -c "SELECT count(*) || ' ' || string_agg(id::text, ',' ORDER BY id) FROM redrive.attempt")" \
    = "13 1,2,3,4,5,6,7,8,9,10,11,12,13" ] || fail "not the 13 attempts 1..13 after"
[ "$(run -c "SELECT string_agg(a::text, '|' ORDER BY a.id) FROM redrive.attempt a")" = "$all_before" ] \
    || fail "an attempt's columns changed"
[ "$(run -c "SELECT string_agg(tableoid::regclass::text || ':' || n, ' ' ORDER BY tableoid::regclass::text)
               FROM (SELECT tableoid, count(*) n FROM redrive.attempt GROUP BY 1) x")" \
    = "redrive.attempt_2026_01:3 redrive.attempt_2026_02:6 redrive.attempt_2026_03:3 redrive.attempt_2031_07:1" ] \
    || fail "attempts not in their months: $(run -c "SELECT string_agg(tableoid::regclass::text, ' ') FROM redrive.attempt")"
[ "$(run -c "SELECT string_agg(h::text, '|' ORDER BY h.started_at, h.id)
               FROM redrive.attempt_history h WHERE h.dead_letter_id = $dl")" = "$history_before" ] \
    || fail "the case view reads another history"
[ "$(run -c "SELECT string_agg(r::text, '|' ORDER BY r.series, r.grain_s, r.bucket, r.key)
               FROM redrive.bucket_rollup r")" = "$rollup_before" ] \
    || fail "the overview's rollups changed"
[ "$(run -c "SELECT count(*) FROM redrive.attempt_timeline")" = 13 ] \
    || fail "the overview's timeline does not read 13 attempts"
[ "$(run -c "SELECT count(*) FROM pg_class WHERE relname LIKE '%_unpartitioned%'")" = 0 ] \
    || fail "an old table is left behind"
# Readers keep reading; the worker keeps no more than it had (SELECT).
[ "$(run -c "SELECT string_agg(privilege_type || ':' || grantee, ' ' ORDER BY grantee, privilege_type)
               FROM information_schema.role_table_grants
              WHERE table_schema = 'redrive' AND table_name = 'attempt' AND grantee LIKE 'redrive_%'")" \
    = "SELECT:redrive_approver SELECT:redrive_auditor SELECT:redrive_oncall SELECT:redrive_support SELECT:redrive_worker" ] \
    || fail "the grants on redrive.attempt changed"

# The identity goes on after 14 (used by the aborted insert), and the rollup counts the new one.
[ "$(run -c "INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome, error_class)
             SELECT min(id), 6, '2026-03-05 00:00:00+00', 'failed', 'transient' FROM redrive.job
             RETURNING id || ' ' || tableoid::regclass")" = "15 redrive.attempt_2026_03" ] \
    || fail "the identity did not go on at 15"
[ "$(run -c "SELECT sum(n) FROM redrive.bucket_rollup WHERE series = 'attempt' AND grain_s = 60")" = 14 ] \
    || fail "the rollup did not count the new attempt once"

# maintain: this month and 5 ahead exist afterwards; a second run creates nothing. An attempt
# in a month with no partition lands in the default one and moves to its month when maintain
# creates it.
ahead=$(run -c "SELECT (date_trunc('month', clock_timestamp(), 'UTC') AT TIME ZONE 'UTC'
                        + interval '5 months')::date")
run -c "INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome, error_class)
        SELECT min(id), 7, timestamptz '$ahead 12:00:00+00', 'failed', 'transient'
          FROM redrive.job"
[ "$(run -c "SELECT tableoid::regclass FROM redrive.attempt WHERE attempt_no = 7")" \
    = redrive.attempt_default ] || fail "an attempt 5 months ahead is not in the default partition"
"$redrive" maintain --months-ahead 5 --conninfo "dbname=$db" | tee /dev/stderr \
    | grep "created partition redrive.attempt_$(date -u -d "$ahead" +%Y_%m)" \
    >/dev/null || fail "maintain did not create the month 5 ahead"
[ "$(run -c "SELECT tableoid::regclass || ' ' || id FROM redrive.attempt WHERE attempt_no = 7")" \
    = "redrive.attempt_$(date -u -d "$ahead" +%Y_%m) 16" ] \
    || fail "the default partition's attempt did not move to its month"
[ "$(run -c "SELECT count(*) FROM redrive.attempt_default")" = 0 ] || fail "the default is not empty"
[ "$(run -c "SELECT sum(n) FROM redrive.bucket_rollup WHERE series = 'attempt' AND grain_s = 60")" = 15 ] \
    || fail "moving an attempt between partitions changed the rollup"
"$redrive" maintain --months-ahead 5 --conninfo "dbname=$db" \
    | grep "every partition up to 5 months ahead exists" >/dev/null || fail "a second maintain created something"
"$redrive" maintain --months-ahead 121 --conninfo "dbname=$db" >/dev/null 2>&1 && fail "121 months accepted"
[ $? -eq 64 ] || fail "121 months is not a usage error"
"$redrive" verify-audit --conninfo "dbname=$db" >/dev/null || fail "the chain does not verify after"
echo "cli_upgrade_partitions: ok"
