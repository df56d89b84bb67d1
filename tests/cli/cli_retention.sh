#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Retention end to end through the real command line (docs/architecture.md "Retention"):
# `redrive archive` writes exactly the old resolved dead letter and removes it, a second run
# writes nothing; `redrive export-audit` of a past month, then `redrive audit-detach` detaches
# it, `redrive verify-audit` says it verified from the recorded head, the independent Python
# verifier accepts the month's export, and exit 64 on bad usage.
#   cli_retention.sh PGTEST_DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=$1
redrive=$2
here=$(cd "$(dirname "$0")" && pwd)
set -a
. "$dir/env"
set +a
db="t_cli_retention_$$"
out=$(mktemp -d)
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db TEMPLATE redrive_template"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; rm -rf "$out"' EXIT
run() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }
fail() { echo "cli_retention: $*"; exit 1; }

# Two entries in January 2026, one in February (chained as the trigger would), then two dead
# letters: one resolved 120 days ago, one open.
run "SELECT redrive.ensure_month_partition('audit_log', 'at', m)
       FROM unnest(ARRAY['2026-01-10', '2026-02-10']::timestamptz[]) m"
psql -X -q -v ON_ERROR_STOP=1 -d "$db" <<'SQL'
ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_chain;
DO $$
DECLARE
    e redrive.audit_log;
    prev bytea;
BEGIN
    FOR i IN 1 .. 3 LOOP
        e := ROW(nextval('redrive.audit_log_id_seq'),
                 timestamptz '2026-01-20 10:00:00+00' + make_interval(days => 5 * i),
                 'alice', NULL, 'alice', 'note', '[]', 'entry ' || i, NULL, NULL, NULL,
                 gen_random_uuid(), '{}', prev, NULL)::redrive.audit_log;
        e.hash := redrive.audit_entry_hash(prev, e);
        INSERT INTO redrive.audit_log SELECT (e).*;
        prev := e.hash;
    END LOOP;
END
$$;
ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_chain;
WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id, updated_at)
           SELECT 'emails', 'send', '{}', 'dead', t, now() - interval '130 days'
             FROM unnest(ARRAY['old', 'open']) t RETURNING id, entity_id)
INSERT INTO redrive.dead_letter (job_id, queue, kind, status, error_class, last_error, dead_at,
                                 resolution, resolved_at, updated_at)
SELECT id, 'emails', 'send', CASE entity_id WHEN 'old' THEN 'resolved' ELSE 'open' END,
       'permanent', 'mailbox gone', now() - interval '130 days',
       CASE entity_id WHEN 'old' THEN 'not_needed' END,
       CASE entity_id WHEN 'old' THEN now() - interval '120 days' END,
       now() - interval '120 days'
  FROM j;
SQL
kept=$(run "SELECT d.id FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id WHERE j.entity_id = 'open'")
gone=$(run "SELECT d.id FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id WHERE j.entity_id = 'old'")

"$redrive" archive --conninfo "dbname=$db" --older-than 90d --out "$out/a.jsonl" >"$out/a1.out"
cat "$out/a1.out"
grep -q "^redrive archive: archived 1 dead letters (ids $gone to $gone) with 0 attempts in 1 audited chunks$" "$out/a1.out" \
    || fail "the first run did not archive exactly dead letter $gone"
sha=$(sha256sum "$out/a.jsonl" | cut -d' ' -f1)
grep -q "sha256 $sha\$" "$out/a1.out" || fail "the printed SHA-256 is not the file's"
[ "$(wc -l <"$out/a.jsonl")" = 1 ] || fail "the file does not hold one line"
[ "$(run "SELECT string_agg(id::text, ',') FROM redrive.dead_letter")" = "$kept" ] \
    || fail "not exactly the open dead letter $kept is left"
[ "$(run "SELECT outcome ->> 'lines_sha256' FROM redrive.audit_log WHERE action = 'archive_dead_letters'")" = "$sha" ] \
    || fail "the audit entry does not hold the file's SHA-256"
"$redrive" archive --conninfo "dbname=$db" --out "$out/a.jsonl" >"$out/a2.out"
grep -q "^redrive archive: nothing to archive (resolved and older than 90 days)$" "$out/a2.out" \
    || fail "the second run archived something"
[ "$(sha256sum "$out/a.jsonl" | cut -d' ' -f1)" = "$sha" ] || fail "the second run changed the file"

# January leaves the live table; verification starts from its recorded head.
"$redrive" export-audit --conninfo "dbname=$db" --format jsonl --from 2026-01-01T00:00:00Z \
    --until 2026-02-01T00:00:00Z --output "$out/audit-2026-01.jsonl" 2>/dev/null
python3 "$here/../support/verify_audit_export.py" "$out/audit-2026-01.jsonl" >/dev/null \
    || fail "the Python verifier refused January's export"
"$redrive" audit-detach --conninfo "dbname=$db" --month 2026-01 --export "$out/audit-2026-01.jsonl" \
    >"$out/d.out"
cat "$out/d.out"
head2=$(run "SELECT encode(hash, 'hex') FROM redrive.audit_log_2026_01 WHERE id = 2")
grep -q "^redrive audit-detach: recorded head: entry 2 hash $head2; verification starts there$" "$out/d.out" \
    || fail "audit-detach did not record entry 2's hash"
"$redrive" verify-audit --conninfo "dbname=$db" >"$out/v.out" || { cat "$out/v.out"; fail "verify-audit failed after the detach"; }
cat "$out/v.out"
at=$(run "SELECT to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM redrive.audit_detached_month")
grep -qx "verified from the head recorded on $at UTC at entry 2 (audit months up to 2026-01 detached)" "$out/v.out" \
    || fail "verify-audit does not say where it started"
# February's export follows that head in the Python verifier too.
"$redrive" export-audit --conninfo "dbname=$db" --format jsonl --from 2026-02-01T00:00:00Z \
    --until 2026-03-01T00:00:00Z --output "$out/audit-2026-02.jsonl" 2>/dev/null
python3 "$here/../support/verify_audit_export.py" "$out/audit-2026-02.jsonl" --start-hash "$head2" >/dev/null \
    || fail "the Python verifier refused February's export after January's head"

set +e
"$redrive" archive --conninfo "dbname=$db" >/dev/null 2>&1; rc_out=$?
"$redrive" archive --conninfo "dbname=$db" --older-than 12h --out "$out/x.jsonl" >/dev/null 2>&1; rc_period=$?
"$redrive" audit-detach --conninfo "dbname=$db" --month 2026-13 --export "$out/d.out" >/dev/null 2>&1; rc_month=$?
set -e
[ "$rc_out" = 64 ] || fail "archive without --out exited $rc_out, not 64"
[ "$rc_period" = 64 ] || fail "archive --older-than 12h exited $rc_period, not 64"
[ "$rc_month" = 64 ] || fail "audit-detach --month 2026-13 exited $rc_month, not 64"
echo "cli_retention: ok"
