#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the pinned Node workload of the source adapter tests into a build folder:
# tests/sources/node/{package.json,package-lock.json,workload.js} copied there, then `npm ci`
# from the npm registry (pg-boss and graphile-worker at the versions the lock file pins).
#   sources_node.sh SOURCE_DIR DEST_DIR
# Without node or npm on the machine it says so and exits 0: the tests then skip. A failing
# `npm ci` fails. A second run with an unchanged lock file reuses node_modules.
set -euo pipefail
src=${1:?usage: sources_node.sh SOURCE_DIR DEST_DIR}
dest=${2:?usage: sources_node.sh SOURCE_DIR DEST_DIR}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "sources_node: node or npm not found (apt-get install nodejs npm): source tests will skip"
    exit 0
fi
mkdir -p "$dest"
cp "$src/workload.js" "$dest/"
if [ -d "$dest/node_modules" ] && cmp -s "$src/package-lock.json" "$dest/package-lock.json" \
   && cmp -s "$src/package.json" "$dest/package.json"; then
    echo "sources_node: node_modules up to date in $dest"
    exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dest/"
cd "$dest"
npm ci --no-audit --no-fund --loglevel=error
echo "sources_node: installed $(node -p 'require("pg-boss/package.json").version') (pg-boss)," \
     "$(node -p 'require("graphile-worker/package.json").version') (graphile-worker) with node $(node --version)"
