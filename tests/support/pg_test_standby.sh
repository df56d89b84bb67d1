#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A streaming hot standby of the test cluster (pg_test_cluster.sh), for the tests of reading from
# a standby (docs/architecture.md#reading-from-a-standby; a CTest fixture).
#   pg_test_standby.sh start DIR PRIMARY_DIR   pg_basebackup of the primary into DIR through a
#                                              replication slot (-R -C -S), started as a hot
#                                              standby on a free loopback port with its socket in
#                                              DIR; writes DIR/env with STANDBY_PGHOST/STANDBY_PGPORT
#   pg_test_standby.sh stop DIR PRIMARY_DIR    stop it (fast) and drop its slot on the primary
#   pg_test_standby.sh halt DIR                stop the server only (a test's "standby went away")
#   pg_test_standby.sh resume DIR              start it again after halt (it catches up through
#                                              its slot)
# The primary needs nothing new: PostgreSQL 15 defaults to wal_level=replica and
# max_wal_senders=10, and pg_test_cluster.sh's pg_hba.conf trusts replication on its Unix socket.
# As root the server runs as the `postgres` OS user, like the primary.
set -euo pipefail

usage="usage: pg_test_standby.sh start|stop DIR PRIMARY_DIR | halt|resume DIR"
action=${1:?$usage}
dir=${2:?$usage}

pgbin=${REDRIVE_PG_BINDIR:-}
if [ -z "$pgbin" ]; then
    for candidate in /usr/lib/postgresql/15/bin "$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/x)")"; do
        if [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/pg_basebackup" ]; then pgbin=$candidate; break; fi
    done
fi
[ -n "$pgbin" ] || { echo "pg_test_standby: PostgreSQL 15 server binaries not found (apt-get install postgresql-15)" >&2; exit 1; }

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

slot=redrive_test_standby

start_server() {
    local port
    port=$(cat "$dir/port")
    # A hot standby needs max_connections at least the primary's (200 in pg_test_cluster.sh).
    as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=60 \
        -o "-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off -c max_connections=200 -c shared_buffers=64MB -c hot_standby=on -c hot_standby_feedback=on -c wal_receiver_status_interval=1s" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
}

case "$action" in
start)
    primary=${3:?$usage}
    set -a
    . "$primary/env"
    set +a
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$dir"
        d=$(cd "$dir" && pwd)
        while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
    fi
    # A slot left by an earlier run would keep WAL forever and make -C fail.
    psql -X -q -d postgres -c "SELECT pg_drop_replication_slot('$slot') FROM pg_replication_slots WHERE slot_name = '$slot'" >/dev/null
    as_owner "$pgbin/pg_basebackup" --pgdata="$dir/data" --host="$PGHOST" --port="$PGPORT" \
        --username=postgres --write-recovery-conf --create-slot --slot="$slot" \
        --checkpoint=fast --wal-method=stream --no-sync >"$dir/basebackup.log" 2>&1 \
        || { cat "$dir/basebackup.log" >&2; exit 1; }
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
           || echo $(( 20000 + RANDOM % 20000 )))
    echo "$port" >"$dir/port"
    start_server
    # Streaming before any test asks: the primary lists the standby's WAL receiver.
    for _ in $(seq 1 100); do
        state=$(psql -X -At -d postgres -c "SELECT state FROM pg_stat_replication WHERE application_name <> '' LIMIT 1" || true)
        [ "$state" = streaming ] && break
        sleep 0.1
    done
    [ "$state" = streaming ] || { echo "pg_test_standby: the standby does not stream" >&2; cat "$dir/server.log" >&2; exit 1; }
    cat >"$dir/env" <<ENV
STANDBY_PGHOST=$dir
STANDBY_PGPORT=$port
ENV
    echo "pg_test_standby: hot standby of $PGHOST streaming on port $port, socket in $dir"
    ;;
stop)
    primary=${3:?$usage}
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >/dev/null || true
    fi
    if [ -f "$primary/env" ]; then
        set -a
        . "$primary/env"
        set +a
        # The primary's WAL sender lets go of the slot a moment after the standby stopped.
        for _ in $(seq 1 50); do
            left=$(psql -X -At -d postgres -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$slot'" 2>/dev/null || echo 0)
            [ "$left" = 0 ] && break
            psql -X -q -d postgres -c "SELECT pg_drop_replication_slot('$slot') FROM pg_replication_slots WHERE slot_name = '$slot' AND NOT active" >/dev/null 2>&1 || true
            sleep 0.1
        done
    fi
    echo "pg_test_standby: stopped"
    ;;
halt)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$pgbin/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >/dev/null
    fi
    ;;
resume)
    start_server
    ;;
*)
    echo "$usage" >&2
    exit 2
    ;;
esac
