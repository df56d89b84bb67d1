#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Starts or stops a throwaway PostgreSQL 15 for the test suite (a CTest fixture).
#   pg_test_cluster.sh start DIR   initdb into DIR, listen on a Unix socket in DIR (trust) and a
#                                  free loopback port (scram-sha-256: password tests), write
#                                  DIR/env with PGHOST/PGPORT/PGUSER
#   pg_test_cluster.sh stop DIR    stop it (fast shutdown) and leave DIR for inspection
#   pg_test_cluster.sh resume DIR  start a cluster that `start` made and `stop` left in DIR again,
#                                  data kept, on the port DIR/env names (the scale benchmark's
#                                  --keep, tests/perf/run_scale_bench.sh)
# REDRIVE_PG_SHARED_BUFFERS sets the server's shared_buffers at start and resume (default 256MB,
# plenty for the suite; the scale benchmark sizes it as PostgreSQL's documentation advises).
# As root the server runs as the `postgres` OS user, because postgres refuses to run as root.
set -euo pipefail

action=${1:?usage: pg_test_cluster.sh start|resume|stop DIR}
dir=${2:?usage: pg_test_cluster.sh start|resume|stop DIR}

pgbin=${REDRIVE_PG_BINDIR:-}
if [ -z "$pgbin" ]; then
    for candidate in /usr/lib/postgresql/15/bin "$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/x)")"; do
        if [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/initdb" ]; then pgbin=$candidate; break; fi
    done
fi
[ -n "$pgbin" ] || { echo "pg_test_cluster: PostgreSQL 15 server binaries not found (apt-get install postgresql-15)" >&2; exit 1; }

shared_buffers=${REDRIVE_PG_SHARED_BUFFERS:-256MB}

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

case "$action" in
start)
    if [ -f "$dir/data/postmaster.pid" ]; then
        "$0" stop "$dir" || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
        chown postgres: "$dir"
        # The server must reach its data directory through every parent.
        d=$(cd "$dir" && pwd)
        while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
    fi
    as_owner "$pgbin/initdb" --pgdata="$dir/data" --username=postgres --auth=trust \
        --encoding=UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    # The Unix socket trusts everyone (every test connects through it); the loopback port asks
    # for a password (SCRAM), so password handling is tested against a real server: a role made
    # WITH PASSWORD logs in with host=127.0.0.1, and a wrong password is refused with 28P01.
    cat >"$dir/data/pg_hba.conf" <<'HBA'
local   all             all                                     trust
local   replication     all                                     trust
host    all             all             127.0.0.1/32            scram-sha-256
host    all             all             ::1/128                 scram-sha-256
HBA
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
           || echo $(( 20000 + RANDOM % 20000 )))
    as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=60 \
        -o "-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=$shared_buffers" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    cat >"$dir/env" <<ENV
PGHOST=$dir
PGPORT=$port
PGUSER=postgres
ENV
    echo "pg_test_cluster: PostgreSQL running on port $port, socket in $dir"
    ;;
resume)
    [ -f "$dir/env" ] && [ -d "$dir/data" ] || { echo "pg_test_cluster: no cluster in $dir" >&2; exit 1; }
    if [ -f "$dir/data/postmaster.pid" ] && as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" status >/dev/null 2>&1; then
        echo "pg_test_cluster: already running in $dir"
        exit 0
    fi
    port=$(sed -n 's/^PGPORT=//p' "$dir/env")
    as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=120 \
        -o "-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=$shared_buffers" \
        start >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
    echo "pg_test_cluster: PostgreSQL resumed on port $port, socket in $dir"
    ;;
stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >/dev/null || true
    fi
    echo "pg_test_cluster: stopped"
    ;;
*)
    echo "usage: pg_test_cluster.sh start|resume|stop DIR" >&2
    exit 2
    ;;
esac
