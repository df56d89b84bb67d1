#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `redrive verify-audit` end to end: exit 0 on an intact chain and against its exported
# head, exit 1 naming the entry when the owner rewrote one, and when the tail was cut.
#   cli_verify_audit.sh PGTEST_DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=$1
redrive=$2
set -a
. "$dir/env"
set +a
db="t_cli_verify_audit_$$"
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db TEMPLATE redrive_template"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"' EXIT
run() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }
run "INSERT INTO redrive.audit_log (action, reason, action_id)
     SELECT 'note', 'entry ' || g, gen_random_uuid() FROM generate_series(1, 6) g"
read -r head_id head_hash < <(run "SELECT id || ' ' || encode(hash, 'hex') FROM redrive.audit_log ORDER BY id DESC LIMIT 1")

"$redrive" verify-audit --conninfo "dbname=$db"
"$redrive" verify-audit --conninfo "dbname=$db" --head-id "$head_id" --head-hash "$head_hash"

victim=$(run "SELECT id FROM redrive.audit_log ORDER BY id LIMIT 1 OFFSET 2")
run "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete"
run "UPDATE redrive.audit_log SET reason = 'rewritten' WHERE id = $victim"
set +e
out=$("$redrive" verify-audit --conninfo "dbname=$db"); rc=$?
set -e
echo "$out"
[ "$rc" = 1 ] && grep -q "BROKEN at entry $victim" <<<"$out" || { echo "rewrite not detected"; exit 1; }

run "UPDATE redrive.audit_log SET reason = 'entry 3' WHERE id = $victim"
run "DELETE FROM redrive.audit_log WHERE id = $head_id"
"$redrive" verify-audit --conninfo "dbname=$db"   # what is left is consistent...
set +e
out=$("$redrive" verify-audit --conninfo "dbname=$db" --head-id "$head_id" --head-hash "$head_hash"); rc=$?
set -e
echo "$out"
[ "$rc" = 1 ] && grep -q "deleted" <<<"$out" || { echo "cut tail not detected"; exit 1; }
echo "cli_verify_audit: ok"
