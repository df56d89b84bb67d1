#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The soak in one command (docs/reliability.md#the-soak): five console sessions and two reference
# workers act for 60 s on 1,000 dead letters while backends are killed at random, then every
# invariant is printed with its counts. Exits 1 when one is broken. Builds build/ first when the
# soak is missing; starts the test cluster in build/pgtest with its migrated template when it is
# not running (and stops it again afterwards), else uses the template there.
#   bash tests/perf/soak.sh [--seconds N] [--seed S] [--dead-letters N]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${REDRIVE_BUILD_DIR:-$root/build}
if [ ! -x "$build/tests/soak" ] || [ ! -x "$build/app/redrive-worker" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j"$(nproc)" --target redrive redrive-worker soak
fi
dir=$build/pgtest
if [ ! -f "$dir/data/postmaster.pid" ]; then
    bash "$root/tests/support/pg_test_cluster.sh" start "$dir"
    trap 'bash "$root/tests/support/pg_test_cluster.sh" stop "$dir" >/dev/null 2>&1 || true' EXIT
    bash "$root/tests/support/pg_test_template.sh" "$dir" "$build/app/redrive" >/dev/null
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
QT_QPA_PLATFORM=offscreen "$build/tests/soak" --seconds 60 --worker "$build/app/redrive-worker" "$@"
