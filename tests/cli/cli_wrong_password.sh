#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A wrong password neither hangs nor hammers, end to end: the headless modes of the real
# executable (--screenshot, --screenshot-case, migrate, export-audit) exit non-zero within
# seconds with one line that names the refused login and never the password. The test cluster
# asks for a password over TCP (tests/support/pg_test_cluster.sh).
#   cli_wrong_password.sh PGTEST_DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=$1
redrive=$2
set -a
. "$dir/env"
set +a
role="t_cli_pw_$$"
secret="wrong-pw-$$-do-not-print"
out=$(mktemp -d)
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE ROLE $role LOGIN PASSWORD 'right-pw-$$'"
trap 'psql -X -q -d postgres -c "DROP ROLE IF EXISTS $role"; rm -rf "$out"' EXIT
fail() { echo "cli_wrong_password: $*"; exit 1; }
conninfo="host=127.0.0.1 port=$PGPORT dbname=postgres user=$role password=$secret passfile=/nonexistent"

# expect NAME EXPECTED_EXIT ARGS...: runs redrive with a 20 s guard, checks the exit code, the
# time (under 10 s), a one-line message naming the login last on stderr, and that the password
# appears nowhere (stdout, stderr, the settings folder).
expect() {
    local name=$1 want=$2
    shift 2
    local start=$SECONDS rc=0
    timeout 20 env QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$out/config" "$redrive" "$@" \
        >"$out/$name.out" 2>"$out/$name.err" || rc=$?
    local took=$((SECONDS - start))
    echo "$name: exit $rc after ${took}s: $(cat "$out/$name.err")"
    [ "$rc" != 124 ] || fail "$name hangs (killed after 20 s)"
    [ "$rc" = "$want" ] || fail "$name exited $rc, not $want"
    [ "$took" -lt 10 ] || fail "$name took ${took}s"
    # Qt and the redrive.db log may say things first; the last line is the message, whole.
    local last
    last=$(tail -n 1 "$out/$name.err")
    case $last in redrive*"$role"*) ;; *) fail "$name: the last line is not the message: $last" ;; esac
    ! grep -q -- "$secret" "$out/$name.out" "$out/$name.err" || fail "$name printed the password"
    ! grep -q -- "$secret" -r "$out/config" 2>/dev/null || fail "$name saved the password"
}

expect screenshot 69 --screenshot "$out/main.png" --conninfo "$conninfo"
tail -n 1 "$out/screenshot.err" | grep -q "^redrive: login refused" \
    || fail "screenshot: no 'login refused'"
[ ! -e "$out/main.png" ] || fail "screenshot: wrote a picture of a refused login"
expect screenshot_case 69 --screenshot "$out/case.png" --screenshot-case 1 --conninfo "$conninfo"
expect screenshot_uri 69 --screenshot "$out/uri.png" \
    --conninfo "postgresql://$role:$secret@127.0.0.1:$PGPORT/postgres?passfile=/nonexistent"
expect migrate 69 migrate --conninfo "$conninfo"
expect export_audit 69 export-audit --format csv --conninfo "$conninfo"

# Sanity: the right password gets through (the refusal above was about the password).
psql -X -q -v ON_ERROR_STOP=1 \
    "host=127.0.0.1 port=$PGPORT dbname=postgres user=$role password=right-pw-$$" -c 'SELECT 1' \
    || fail "the right password was refused too"
echo "cli_wrong_password: ok"
