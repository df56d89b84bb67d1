#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `redrive export-audit` end to end: CSV and JSON Lines of a filtered range with the
# row count SQL gives, the chain head on stderr (and beside a CSV file, and as the last JSON line)
# that `redrive verify-audit --head-id --head-hash` accepts as printed; exit 64 on bad usage and
# 69 when the database cannot be reached.
#   cli_export_audit.sh PGTEST_DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=$1
redrive=$2
set -a
. "$dir/env"
set +a
db="t_cli_export_audit_$$"
out=$(mktemp -d)
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db TEMPLATE redrive_template"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; rm -rf "$out"' EXIT
run() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }
run "INSERT INTO redrive.audit_log (action, reason, action_id, targets)
     SELECT CASE WHEN g % 3 = 0 THEN 'requeue' ELSE 'note' END,
            CASE WHEN g = 4 THEN E'tricky, \"quoted\"\nreason' ELSE 'entry ' || g END,
            gen_random_uuid(), jsonb_build_array(jsonb_build_object('type', 'dead_letter', 'id', g % 5))
       FROM generate_series(1, 2345) g"
fail() { echo "cli_export_audit: $*"; exit 1; }

# CSV to a file: the rows SQL counts, the head beside it and on stderr.
"$redrive" export-audit --conninfo "dbname=$db" --format csv --action requeue \
    --output "$out/requeue.csv" 2>"$out/csv.err"
cat "$out/csv.err"
want=$(run "SELECT count(*) FROM redrive.audit_log WHERE action = 'requeue'")
got=$(($(wc -l <"$out/requeue.csv") - 1))
[ "$got" = "$want" ] || fail "csv has $got rows, SQL counts $want"
[ -s "$out/requeue.csv.head.json" ] || fail "no chain head beside the csv"
grep -q '"os_user": *"reported by the client' "$out/requeue.csv.head.json" \
    || fail "the csv's head does not say os_user is reported by the client"
read -r head_id head_hash < <(sed -n 's/^chain head: id \([0-9]*\) hash \([0-9a-f]*\)$/\1 \2/p' "$out/csv.err")
[ -n "$head_id" ] || fail "no chain head printed"
"$redrive" verify-audit --conninfo "dbname=$db" --head-id "$head_id" --head-hash "$head_hash" \
    || fail "verify-audit refused the head the export printed"

# JSON Lines on stdout, filtered by target and time: the last line is the head.
"$redrive" export-audit --conninfo "dbname=$db" --format jsonl --target dead_letter:4 \
    --from 2000-01-01 --until "2999-12-31T00:00:00Z" >"$out/dl4.jsonl" 2>/dev/null
want=$(run "SELECT count(*) FROM redrive.audit_log WHERE targets @> '[{\"type\": \"dead_letter\", \"id\": 4}]'")
got=$(($(wc -l <"$out/dl4.jsonl") - 1))
[ "$got" = "$want" ] || fail "jsonl has $got entries, SQL counts $want"
tail -n 1 "$out/dl4.jsonl" | grep -q "\"chain_head\":{\"at\":\"[^\"]*\",\"entries\":2345,\"hash\":\"$head_hash\",\"id\":$head_id}" \
    || fail "the last jsonl line is not the chain head"
grep -q 'tricky, \\"quoted\\"\\nreason' "$out/dl4.jsonl" || fail "the tricky reason is not escaped"

# Usage errors and an unreachable server.
set +e
"$redrive" export-audit --conninfo "dbname=$db" >/dev/null 2>&1; rc_format=$?
"$redrive" export-audit --conninfo "dbname=$db" --format csv --from yesterday >/dev/null 2>&1; rc_time=$?
"$redrive" export-audit --conninfo "host=/nonexistent port=1 connect_timeout=2" --format csv >/dev/null 2>&1; rc_down=$?
# Output that cannot be written in full fails, and a device given as --output stays a device (a
# save file renamed over it once replaced /dev/full with a regular file).
rc_full_stdout=1; rc_full_output=1; full_device=
if [ -c /dev/full ]; then # a machine without the device cannot try it
    full_device=1
    "$redrive" export-audit --conninfo "dbname=$db" --format jsonl >/dev/full 2>/dev/null; rc_full_stdout=$?
    "$redrive" export-audit --conninfo "dbname=$db" --format csv --output /dev/full >/dev/null 2>&1; rc_full_output=$?
fi
set -e
[ "$rc_full_stdout" = 1 ] || fail "stdout on a full device exited $rc_full_stdout, not 1"
[ "$rc_full_output" = 1 ] || fail "--output /dev/full exited $rc_full_output, not 1"
[ -z "$full_device" ] || [ -c /dev/full ] || fail "/dev/full is no longer a device"
[ ! -e /dev/full.head.json ] || fail "a head file was written beside /dev/full"
[ "$rc_format" = 64 ] || fail "missing --format exited $rc_format, not 64"
[ "$rc_time" = 64 ] || fail "a bad --from exited $rc_time, not 64"
[ "$rc_down" = 69 ] || fail "an unreachable server exited $rc_down, not 69"
echo "cli_export_audit: ok"
