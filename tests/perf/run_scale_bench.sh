#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The scale benchmark in one command (docs/benchmarks.md): a throwaway PostgreSQL 15, `redrive
# migrate`, the scale world (`redrive-worker scale`, 1,000,000 dead letters by default), then
# bench_scale_world, which prints the machine, each case's median and the console paths next to
# their floors. Builds build/ first when it is missing.
#   bash tests/perf/run_scale_bench.sh [--dead-letters N] [--runs N]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${REDRIVE_BUILD_DIR:-$root/build}
dead_letters=1000000; runs=5
while [ $# -gt 0 ]; do
    case "$1" in
    --dead-letters) dead_letters=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: run_scale_bench.sh [--dead-letters N] [--runs N]" >&2; exit 64 ;;
    esac
done
if [ ! -x "$build/tests/bench_scale_world" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j"$(nproc)" --target redrive redrive-worker bench_scale_world
fi
dir=$(mktemp -d /tmp/redrive-bench.XXXXXX)
bash "$root/tests/support/pg_test_cluster.sh" start "$dir"
trap 'bash "$root/tests/support/pg_test_cluster.sh" stop "$dir" >/dev/null 2>&1 || true' EXIT
set -a; . "$dir/env"; set +a
psql -qX -d postgres -c 'CREATE DATABASE bench' >/dev/null
"$build/app/redrive" migrate --conninfo dbname=bench >/dev/null
keys=$dead_letters; mismatches=$((dead_letters / 10))
"$build/app/redrive-worker" scale --conninfo dbname=bench --dead-letters "$dead_letters" \
    --keys "$keys" --mismatches "$mismatches" --audit-entries "$dead_letters"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$(psql -AtX -d bench -c 'SHOW server_version')"
"$build/tests/bench_scale_world" dbname=bench --runs "$runs"
