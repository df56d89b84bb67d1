#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `redrive verify-audit` does not trust the server it audits
# (docs/audit-chain.md): with redrive.verify_audit_chain replaced by a function that finds
# nothing, it still names an edited entry, the ids around a deleted one and a cut tail. A second
# verifier written from the spec alone (verify_audit_export.py, over `redrive export-audit`)
# must agree with it on a good chain with tricky content and on every break.
#   cli_verify_audit_untrusted.sh PGTEST_DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=$1
redrive=$2
here=$(cd "$(dirname "$0")" && pwd)
set -a
. "$dir/env"
set +a
db="t_cli_verify_untrusted_$$"
out=$(mktemp -d)
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db TEMPLATE redrive_template"
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"; rm -rf "$out"' EXIT
run() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }
fail() { echo "cli_verify_audit_untrusted: $*"; exit 1; }

# Entries with content that is easy to get wrong: quotes, backslashes, control characters,
# non-ASCII text, NULL fields, nested JSON with numbers as written.
run "INSERT INTO redrive.audit_log (action, reason, action_id, targets, ticket, os_user, before, after)
     SELECT 'note', 'entry ' || g, gen_random_uuid(), jsonb_build_array(jsonb_build_object('id', g)),
            NULL, NULL, NULL, NULL FROM generate_series(1, 5) g"
run "INSERT INTO redrive.audit_log (action, reason, action_id, targets, ticket, os_user, before, after, outcome)
     VALUES ('requeue', E'say \"hi\" \\\\ back\\\\slash\n\ttab\r\b\f\x01\x1f\x7f done', gen_random_uuid(),
             '[{\"type\": \"dead_letter\", \"id\": 9007199254740993}]', E'T-1\u00e9\u4e2d\U0001F600',
             E'os\"user', '{\"status\": \"open\", \"amount\": 1.50, \"e\": 1e2, \"s\": \"a\\u0001b\\\\c\"}',
             '{\"status\": \"requeued\", \"nested\": {\"k\": [1, 2.0, null, true]}}',
             '{\"applied\": 1, \"msg\": \"\u00fcber\"}')"
run "INSERT INTO redrive.audit_log (action, reason, action_id)
     SELECT 'note', 'entry ' || g, gen_random_uuid() FROM generate_series(7, 10) g"
# An IPv6 and an IPv4-mapped client address, chained again by the server's own function (as the
# trigger would have): the client verifiers must render them exactly as host() does.
run "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete"
run "UPDATE redrive.audit_log SET client_addr = '2001:db8:0:0:1:0:0:1'
      WHERE id = (SELECT min(id) FROM redrive.audit_log)"
run "UPDATE redrive.audit_log SET client_addr = '::ffff:10.1.2.3'
      WHERE id = (SELECT max(id) FROM redrive.audit_log)"
run "DO \$\$ DECLARE r redrive.audit_log; v_prev bytea; BEGIN
       FOR r IN SELECT * FROM redrive.audit_log ORDER BY id LOOP
         UPDATE redrive.audit_log SET prev_hash = v_prev, hash = redrive.audit_entry_hash(v_prev, r)
          WHERE id = r.id RETURNING hash INTO v_prev;
       END LOOP; END \$\$"
run "ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_no_update_delete"
[ "$(run "SELECT count(*) FROM redrive.verify_audit_chain()")" = 0 ] \
    || fail "the server's own check does not accept the test chain"

read -r head_id head_hash < <(run "SELECT id || ' ' || encode(hash, 'hex') FROM redrive.audit_log ORDER BY id DESC LIMIT 1")
ids=($(run "SELECT id FROM redrive.audit_log ORDER BY id"))

# Runs both verifiers (the C++ one on the database, the Python one on a fresh export), each
# with the extra arguments given; both must exit with `want`, print the same verdict line and,
# when broken, match `pattern`.
both() {
    local want=$1 pattern=$2
    shift 2
    local rc_c rc_p
    "$redrive" export-audit --conninfo "dbname=$db" --format jsonl --output "$out/audit.jsonl" \
        2>/dev/null || fail "export-audit failed"
    set +e
    "$redrive" verify-audit --conninfo "dbname=$db" "$@" >"$out/c.txt" 2>&1; rc_c=$?
    python3 "$here/verify_audit_export.py" "$out/audit.jsonl" "$@" >"$out/p.txt" 2>&1; rc_p=$?
    set -e
    echo "--- redrive verify-audit $*"; cat "$out/c.txt"
    echo "--- verify_audit_export.py $*"; cat "$out/p.txt"
    [ "$rc_c" = "$want" ] || fail "redrive verify-audit exited $rc_c, not $want"
    [ "$rc_p" = "$want" ] || fail "verify_audit_export.py exited $rc_p, not $want"
    local verdict_c verdict_p
    verdict_c=$(grep -E '^(BROKEN|audit chain OK)' "$out/c.txt" | sed 's/ in the client//')
    verdict_p=$(grep -E '^(BROKEN|audit chain OK)' "$out/p.txt" | sed 's/ in the client//')
    [ -n "$verdict_c" ] && [ "$verdict_c" = "$verdict_p" ] || fail "the verifiers disagree"
    [ "$(grep '^chain head' "$out/c.txt")" = "$(grep '^chain head' "$out/p.txt")" ] \
        || fail "the verifiers read another head"
    [ -z "$pattern" ] || grep -qE "$pattern" "$out/c.txt" || fail "expected /$pattern/"
}

# 1. A good chain holds, alone and against its head.
both 0 ""
both 0 "" --head-id "$head_id" --head-hash "$head_hash"

# 2. The attacker replaces the server's check with one that finds nothing.
run "CREATE OR REPLACE FUNCTION redrive.verify_audit_chain(p_from_id bigint DEFAULT NULL,
         p_expected_id bigint DEFAULT NULL, p_expected_hash bytea DEFAULT NULL)
     RETURNS TABLE (broken_id bigint, problem text, checked bigint)
     LANGUAGE sql AS \$\$ SELECT NULL::bigint, NULL::text, NULL::bigint WHERE false \$\$"

# 3. An edited entry (the owner turned the guard trigger off).
victim=${ids[3]}
run "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete"
run "UPDATE redrive.audit_log SET reason = 'rewritten' WHERE id = $victim"
[ "$(run "SELECT count(*) FROM redrive.verify_audit_chain()")" = 0 ] || fail "the function was not replaced"
both 1 "^BROKEN at entry $victim: entry $victim was changed"
run "UPDATE redrive.audit_log SET reason = 'entry 4' WHERE id = $victim"
both 0 ""

# 4. A deleted entry in the middle: both name the ids on either side of the gap.
gone=${ids[6]}
run "CREATE TABLE public.saved AS SELECT * FROM redrive.audit_log WHERE id = $gone"
run "DELETE FROM redrive.audit_log WHERE id = $gone"
both 1 "^BROKEN at entry ${ids[7]}: missing entries between id ${ids[5]} and id ${ids[7]}"
run "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_chain"
run "INSERT INTO redrive.audit_log SELECT * FROM public.saved"
run "ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_chain"
both 0 "" --head-id "$head_id" --head-hash "$head_hash"

# 5. A cut tail: what is left is consistent, but the exported head is not reached.
run "DELETE FROM redrive.audit_log WHERE id = $head_id"
both 0 ""
both 1 "^BROKEN at entry $head_id: the exported head $head_id was not reached: entries were deleted \(tail cut\)" \
    --head-id "$head_id" --head-hash "$head_hash"

# 6. The head rewritten in place: another hash where the exported head was.
other=${ids[8]}
other_hash=$(run "SELECT encode(hash, 'hex') FROM redrive.audit_log WHERE id = $other")
fake=$(printf '%s' "$other_hash" | tr '0-9a-f' '1-9a-f0')
both 1 "^BROKEN at entry $other: entry $other: hash differs from the exported head" \
    --head-id "$other" --head-hash "$fake"
echo "cli_verify_audit_untrusted: ok"
