#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The scale benchmark in one command (docs/benchmarks.md): a throwaway PostgreSQL 15, `redrive
# migrate`, the scale world (`redrive-worker scale`, 1,000,000 dead letters by default), then
# bench_scale_world, which prints the machine, each case's median and the console paths next to
# their floors. Builds build/ first when it is missing.
#   bash tests/perf/run_scale_bench.sh [--dead-letters N] [--runs N] [--keep DIR] [--world-only]
#                                      [-- BENCH_ARGS]
# --keep DIR puts the cluster in DIR and leaves it there (stopped) afterwards; a later run with the
# same --keep DIR and --dead-letters finds the world DIR/world-done names and skips the load (the
# bulk of a 1,000,000 run), so the bench can be re-run after a fix. Delete DIR when done. The
# bench leaves the world as it found it (the bulk requeue writes to a copy, dropped after the
# run). Arguments after -- go to
# bench_scale_world (e.g. -- --only "case view" to re-run one console case). --world-only builds
# (or finds) the world and stops there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${REDRIVE_BUILD_DIR:-$root/build}
dead_letters=1000000; runs=5; keep=; world_only=
bench_args=()
while [ $# -gt 0 ]; do
    case "$1" in
    --dead-letters) dead_letters=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep | --reuse) keep=$2; shift 2 ;;
    --world-only) world_only=1; shift ;;
    --) shift; bench_args=("$@"); break ;;
    *) echo "usage: run_scale_bench.sh [--dead-letters N] [--runs N] [--keep DIR] [--world-only] [-- BENCH_ARGS]" >&2
       exit 64 ;;
    esac
done
if [ ! -x "$build/app/redrive-worker" ] || { [ -z "$world_only" ] && [ ! -x "$build/tests/bench_scale_world" ]; }; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j"$(nproc)" --target redrive redrive-worker bench_scale_world
fi
world="dead letters $dead_letters"
# The server's shared_buffers as PostgreSQL's documentation advises for a dedicated server, a
# quarter of the memory (runtime-config-resource: "a reasonable starting value"), unless set: the
# suite's 256MB held a tenth of the 1,000,000 world, so every lookup of a large preview read
# its page back from the kernel (docs/benchmarks.md).
if [ -z "${REDRIVE_PG_SHARED_BUFFERS:-}" ]; then
    REDRIVE_PG_SHARED_BUFFERS="$(( $(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 4096 ))MB"
fi
export REDRIVE_PG_SHARED_BUFFERS
if [ -n "$keep" ] && [ "$(cat "$keep/world-done" 2>/dev/null)" = "$world" ]; then
    dir=$(cd "$keep" && pwd)
    bash "$root/tests/support/pg_test_cluster.sh" resume "$dir"
    trap 'bash "$root/tests/support/pg_test_cluster.sh" stop "$dir" >/dev/null 2>&1 || true' EXIT
    set -a; . "$dir/env"; set +a
    echo "world: reused from $dir ($world)"
else
    if [ -n "$keep" ]; then
        mkdir -p "$keep"; dir=$(cd "$keep" && pwd)
    else
        dir=$(mktemp -d /tmp/redrive-bench.XXXXXX)
    fi
    bash "$root/tests/support/pg_test_cluster.sh" start "$dir"
    trap 'bash "$root/tests/support/pg_test_cluster.sh" stop "$dir" >/dev/null 2>&1 || true' EXIT
    set -a; . "$dir/env"; set +a
    psql -qX -d postgres -c 'CREATE DATABASE bench' >/dev/null
    "$build/app/redrive" migrate --conninfo dbname=bench >/dev/null
    keys=$dead_letters; mismatches=$((dead_letters / 10))
    started=$(date +%s)
    "$build/app/redrive-worker" scale --conninfo dbname=bench --dead-letters "$dead_letters" \
        --keys "$keys" --mismatches "$mismatches" --audit-entries "$dead_letters"
    echo "world: built in $(( $(date +%s) - started )) s ($world)"
    [ -z "$keep" ] || echo "$world" >"$dir/world-done"
fi
[ -z "$world_only" ] || exit 0
# The planner's cost of a random page as PostgreSQL's documentation advises when the data is
# cached or on solid-state storage (runtime-config-query: "a lower value might be appropriate";
# 1.1 is the common choice for SSDs): shared_buffers above holds the whole world, so a page read
# by index costs what a page read in sequence does. At the default 4.0 the planner read the
# preview's jobs and keys by whole-table scans and hashes, 1.4 s against 0.7 s by parallel
# index probes (docs/benchmarks.md, "the server's settings"). ALTER SYSTEM writes it in this
# throwaway cluster's postgresql.auto.conf.
psql -qX -d postgres -c 'ALTER SYSTEM SET random_page_cost = 1.1' -c 'SELECT pg_reload_conf()' >/dev/null
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$(psql -AtX -d bench -c 'SHOW server_version'), shared_buffers" \
     "$(psql -AtX -d bench -c 'SHOW shared_buffers'), random_page_cost" \
     "$(psql -AtX -d bench -c 'SHOW random_page_cost')"
# The bulk requeue commits each chunk as the console does, in a throwaway copy of the world (a
# file copy: 14 s for the 1,000,000 world), dropped afterwards (on an interrupt too); not made
# when --only leaves the case out or --first-page-only is given, and when it cannot be made
# (a full disk, say) the bench rolls the bulk requeue back instead, as before.
copy_args=()
only=; next=; want_copy=1
for a in "${bench_args[@]}"; do
    [ -z "$next" ] || { only=$a; next=; }
    case "$a" in
    --only) next=1 ;;
    --only=*) only=${a#--only=} ;;
    --first-page-only) want_copy= ;;
    esac
done
if [ -n "$only" ] && [[ "bulk requeue 100,000 (audit, outbox)" != *"${only,,}"* ]]; then
    want_copy=
fi
drop_copy() { psql -qX -d postgres -c 'DROP DATABASE IF EXISTS bench_write' >/dev/null 2>&1 || true; }
if [ -n "$want_copy" ]; then
    trap 'drop_copy; bash "$root/tests/support/pg_test_cluster.sh" stop "$dir" >/dev/null 2>&1 || true' EXIT
    drop_copy
    if psql -qX -d postgres -c 'CREATE DATABASE bench_write TEMPLATE bench STRATEGY FILE_COPY'; then
        copy_args=(--write-copy bench_write)
    else
        echo "world: no copy for the bulk requeue; it rolls back instead" >&2
    fi
fi
status=0
"$build/tests/bench_scale_world" dbname=bench --runs "$runs" "${copy_args[@]}" "${bench_args[@]}" ||
    status=$?
drop_copy
exit "$status"
