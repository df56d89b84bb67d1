#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The scale benchmark on a 10,000-dead-letter world, so that it cannot rot (CTest perf.smoke):
#   bench_smoke.sh PGTEST_DIR REDRIVE_WORKER BENCH_SCALE_WORLD
# Builds the world with `redrive-worker scale` in a database of its own, runs every case once,
# and prints "bench_smoke: ok" when everything ran (targets are judged at a million, not here).
set -euo pipefail
dir=${1:?PGTEST_DIR}; worker=${2:?redrive-worker}; bench=${3:?bench_scale_world}
set -a; . "$dir/env"; set +a
db=bench_smoke_$$
psql -qX -d postgres -c "CREATE DATABASE $db TEMPLATE redrive_template" >/dev/null
trap 'psql -qX -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
"$worker" scale --conninfo "dbname=$db" --dead-letters 10000 --keys 10000 --mismatches 1000 \
    --audit-entries 1000 >/dev/null
out=$("$bench" "dbname=$db" --runs 1 --explain-above 1000000)
printf '%s\n' "$out"
grep -q "case view, all panes" <<<"$out"
grep -q "overview: attempts by outcome" <<<"$out"
grep -q "first page of a new pass, by status" <<<"$out"
grep -q "failure-group counts, all open" <<<"$out"
grep -q "action preview, largest open group" <<<"$out"
grep -q "redrive export-audit" <<<"$out"
grep -q "bulk requeue 100,000" <<<"$out"
echo "bench_smoke: ok"
