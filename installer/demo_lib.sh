# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by installer/demo.sh and installer/screenshots.sh (sourced, not run): install what is
# missing, build the two programs, and start a throwaway PostgreSQL holding the demo world with
# one login role per Redrive role. Everything started is stopped by demo_cleanup.
#
# After demo_start_database:
#   DEMO_PORT                  the server's loopback port (TCP, password authentication)
#   DEMO_DB                    the database (redrive_demo)
#   demo_conninfo ROLE         prints the console's connection string for demo_ROLE
#   demo_admin CMD...          runs CMD with PGHOST/PGPORT/PGUSER set to the superuser's socket

DEMO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEMO_BUILD=${REDRIVE_BUILD_DIR:-$DEMO_ROOT/build}
DEMO_REDRIVE=$DEMO_BUILD/app/redrive
DEMO_WORKER=$DEMO_BUILD/app/redrive-worker
DEMO_DB=redrive_demo
DEMO_PASSWORD=demo
DEMO_TMP=
DEMO_PORT=
DEMO_KEEP=false
DEMO_PIDS=()

# The demo's login roles, in the order they are listed, and the Redrive roles each is granted.
DEMO_ROLES=(oncall support approver approver2 auditor)
declare -A DEMO_GRANTS=(
    [oncall]=redrive_oncall
    [support]=redrive_support
    [approver]=redrive_approver
    [approver2]="redrive_approver, redrive_support"
    [auditor]=redrive_auditor
)
declare -A DEMO_ABOUT=(
    [oncall]="on-call: requeue, resolve, release keys, edit-and-requeue"
    [support]="support: resolve, request compensation, release keys, resolve mismatches"
    [approver]="approver: approve or reject compensations"
    [approver2]="approver + support: request a compensation, then see you may not approve your own"
    [auditor]="auditor: read everything, verify the audit chain, write nothing"
)

demo_say() { echo "redrive demo: $*"; }
demo_die() { echo "redrive demo: $*" >&2; exit 1; }

# The packages tests/run_tests.sh installs, so the demo and the tests share one build.
demo_ensure_packages() {
    local packages=(build-essential cmake pkg-config qt6-base-dev qt6-base-dev-tools libgl-dev
                    libqcustomplot-dev libpq-dev postgresql-15 postgresql-contrib python3 xvfb
                    xauth)
    local missing=() p sudo=
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || demo_die "run as root, or install sudo: missing ${missing[*]}"
        sudo=sudo
    fi
    demo_say "installing ${missing[*]}"
    $sudo apt-get update
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "${missing[@]}"
}

# Configures build/ the first time (as tests/run_tests.sh does), then rebuilds what is out of date.
demo_ensure_build() {
    if [ ! -f "$DEMO_BUILD/CMakeCache.txt" ]; then
        demo_say "configuring $DEMO_BUILD"
        cmake -S "$DEMO_ROOT" -B "$DEMO_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDRIVE_WERROR=ON
    fi
    demo_say "building redrive and redrive-worker in $DEMO_BUILD (only what is out of date;" \
             "the first build takes a few minutes)"
    local log=$DEMO_TMP/build.log
    cmake --build "$DEMO_BUILD" --target redrive redrive-worker -j"$(nproc)" 2>&1 | tee "$log" \
        | { grep --line-buffered -E '^\[ *[0-9]+%\] Linking' || true; } | sed 's/^/  /' \
        || { tail -n 40 "$log" >&2; demo_die "the build failed (log above)"; }
    [ -x "$DEMO_REDRIVE" ] && [ -x "$DEMO_WORKER" ] || demo_die "no executables in $DEMO_BUILD/app"
}

demo_make_tmp() {
    DEMO_TMP=$(mktemp -d "${TMPDIR:-/tmp}/redrive-demo.XXXXXX")
}

demo_admin() {
    env PGHOST="$DEMO_TMP/pg" PGPORT="$DEMO_PORT" PGUSER=postgres PGDATABASE="$DEMO_DB" "$@"
}

demo_conninfo() {
    echo "host=127.0.0.1 port=$DEMO_PORT dbname=$DEMO_DB user=demo_$1 password=$DEMO_PASSWORD"
}

# Starts PostgreSQL in $DEMO_TMP/pg (as the postgres OS user when run as root), migrates it,
# builds the demo world for `seed` (and `orders`, when given) and creates the login roles.
demo_start_database() {
    local seed=$1 orders=${2:-}
    local cluster=$DEMO_ROOT/tests/support/pg_test_cluster.sh
    "$cluster" start "$DEMO_TMP/pg" | sed 's/^/redrive demo: /'
    DEMO_PORT=$(sed -n 's/^PGPORT=//p' "$DEMO_TMP/pg/env")
    # The superuser keeps trusting the Unix socket (for this script); logins over TCP need their
    # password, as they would on a real server.
    local hba=$DEMO_TMP/pg/data/pg_hba.conf
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- sed -i '/^host/s/trust$/scram-sha-256/' "$hba"
    else
        sed -i '/^host/s/trust$/scram-sha-256/' "$hba"
    fi
    demo_admin psql -X -q -v ON_ERROR_STOP=1 -d postgres \
        -c "SELECT pg_reload_conf()" -c "CREATE DATABASE $DEMO_DB" >/dev/null

    demo_say "redrive migrate"
    demo_admin "$DEMO_REDRIVE" migrate | sed 's/^/  /'
    demo_say "building the demo world (seed $seed; about half a minute)"
    local args=(demo --seed "$seed")
    [ -n "$orders" ] && args+=(--orders "$orders")
    demo_admin "$DEMO_WORKER" "${args[@]}" >"$DEMO_TMP/demo-world.log" 2>&1 \
        || { tail -n 30 "$DEMO_TMP/demo-world.log" >&2; demo_die "the demo world failed (log above)"; }
    grep -E '^redrive-worker demo: world' "$DEMO_TMP/demo-world.log" | sed 's/^redrive-worker demo: /  /'

    local sql="" role
    for role in "${DEMO_ROLES[@]}"; do
        sql+="CREATE ROLE demo_$role LOGIN PASSWORD '$DEMO_PASSWORD' IN ROLE ${DEMO_GRANTS[$role]};"
    done
    demo_admin psql -X -q -v ON_ERROR_STOP=1 -c "$sql" >/dev/null
    demo_say "login roles (password \"$DEMO_PASSWORD\"): ${DEMO_ROLES[*]/#/demo_}"
}

# Starts `redrive-worker run` in the background, so requeues and compensations really execute.
demo_start_worker() {
    # Not through demo_admin: a function in the background runs in a subshell, and $! would be
    # that subshell rather than the worker (env execs, so $! is the worker itself).
    env PGHOST="$DEMO_TMP/pg" PGPORT="$DEMO_PORT" PGUSER=postgres PGDATABASE="$DEMO_DB" \
        "$DEMO_WORKER" run --worker-id demo-worker >"$DEMO_TMP/worker.log" 2>&1 &
    DEMO_PIDS+=($!)
    demo_say "redrive-worker run started (pid $!, log $DEMO_TMP/worker.log)"
}

# Stops whatever was started, in reverse order, and removes the temporary folder.
demo_cleanup() {
    local pid i
    for ((i = ${#DEMO_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${DEMO_PIDS[$i]}
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    DEMO_PIDS=()
    if [ -n "$DEMO_TMP" ] && [ -f "$DEMO_TMP/pg/data/postmaster.pid" ]; then
        "$DEMO_ROOT/tests/support/pg_test_cluster.sh" stop "$DEMO_TMP/pg" >/dev/null 2>&1 || true
    fi
    if [ -n "$DEMO_TMP" ] && [ -d "$DEMO_TMP" ]; then
        if $DEMO_KEEP; then
            demo_say "kept $DEMO_TMP"
        else
            rm -rf "$DEMO_TMP"
        fi
    fi
    DEMO_TMP=
}
