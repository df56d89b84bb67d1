#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds Redrive (warnings are errors) and runs the whole test suite with CTest against a
# throwaway PostgreSQL that the suite starts and stops itself. Usage: tests/run_tests.sh [ctest args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${REDRIVE_BUILD_DIR:-$root/build}

if ! command -v qmake6 >/dev/null || ! dpkg-query -W libqcustomplot-dev >/dev/null 2>&1 \
   || [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        build-essential cmake pkg-config qt6-base-dev qt6-base-dev-tools libgl-dev \
        libqcustomplot-dev libpq-dev postgresql-15 postgresql-contrib python3 xvfb xauth
fi
# The source adapters' tests run pg-boss and graphile-worker with Node.js and npm.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    $sudo apt-get update
    command -v node >/dev/null \
        || $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs
    command -v npm >/dev/null \
        || $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDRIVE_WERROR=ON
cmake --build "$build" -j2
cd "$build"
ctest --output-on-failure -j2 "$@"
