#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Upgrading a database at schema version 20 that already holds money to version 21 (money named
# in minor units, docs/domain.md#money): `redrive migrate` applies 21 and the later ones; the audit
# entries written before it keep their amount_cents keys and the chain still verifies
# (`redrive verify-audit`); the amounts are the same under their new names; the site's own
# payment_list keeps its old column names and still serves requests; request_compensation takes
# p_amount_minor and no longer p_amount_cents.
#   cli_upgrade_minor_units.sh PGTEST_DIR REDRIVE_EXECUTABLE
set -euo pipefail
dir=$1
redrive=$2
migrations="$(cd "$(dirname "$0")/../../resources/migrations" && pwd)"
set -a
. "$dir/env"
set +a
db="t_cli_upgrade_minor_$$"
support="upg_support_$$"
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db"
cleanup() {
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" \
        -c "DROP ROLE IF EXISTS $support" >/dev/null 2>&1 || true
}
trap cleanup EXIT
run() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
as_support() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -U "$support" "$@"; }
fail() { echo "cli_upgrade_minor_units: $*"; exit 1; }

# Schema version 20, as `redrive migrate` of the previous release left it: each migration in its
# own transaction, recorded with its checksum.
run -c "CREATE SCHEMA redrive" -c "CREATE TABLE redrive.schema_version (
            version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            applied_by text NOT NULL DEFAULT session_user)"
for file in "$migrations"/00*.sql; do
    base=$(basename "$file" .sql)
    version=$((10#${base%%_*}))
    [ "$version" -le 20 ] || continue
    run -1 -f "$file" >/dev/null
    run -c "INSERT INTO redrive.schema_version (version, name, checksum)
            VALUES ($version, '${base#*_}', '$(sha256sum "$file" | cut -d' ' -f1)')"
done
[ "$(run -c 'SELECT max(version) FROM redrive.schema_version')" = 20 ] || fail "not at version 20"

# A site's payments view with the names of its day, a support login, and a refund requested the
# old way (by position; the audit entry says amount_cents).
run -c "CREATE ROLE $support LOGIN IN ROLE redrive_support"
run -c "CREATE OR REPLACE VIEW redrive.payment_list AS
        SELECT j.entity_id AS payment_ref, 'ch_' || j.entity_id AS charge_ref,
               5000::bigint AS charged_cents, 0::bigint AS refunded_cents, 'USD'::text AS currency
          FROM redrive.job j WHERE j.entity_id IS NOT NULL"
run -c "WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id)
                   SELECT 'payments', 'charge_card', '{}', 'dead', 'pay_upg' || g
                     FROM generate_series(1, 2) g RETURNING id, queue, kind)
        INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error)
        SELECT id, queue, kind, 'ambiguous', 'timeout', 'read timeout' FROM j"
read -r dl1 dl2 < <(run -c "SELECT string_agg(id::text, ' ' ORDER BY id) FROM redrive.dead_letter")
as_support -c "SELECT redrive.request_compensation(gen_random_uuid(), 'dead_letter', $dl1, 1,
                   'refund', 1500, 'order cancelled', 'SUP-1')" >/dev/null
[ "$(run -c "SELECT after ->> 'amount_cents' FROM redrive.audit_log WHERE action = 'compensate_request'")" = 1500 ] \
    || fail "version 20 did not write amount_cents"
"$redrive" verify-audit --conninfo "dbname=$db" >/dev/null || fail "the chain does not verify before"

# The upgrade: migration 21 and every later one, each once, none before it again.
"$redrive" migrate --conninfo "dbname=$db" | tee /dev/stderr | grep -q "21" || fail "migration 21 not reported"
# (Versions need not be contiguous: count the migration files from 21 on.)
later=$(for f in "$migrations"/00*.sql; do b=$(basename "$f"); v=$((10#${b%%_*})); [ "$v" -le 20 ] || echo "$v"; done | wc -l)
[ "$(run -c "SELECT min(version) = 21 AND count(*) = $later AND count(DISTINCT version) = $later
               FROM redrive.schema_version WHERE version > 20")" = t ] \
    || fail "not exactly the migrations from 21 on applied"
"$redrive" verify-audit --conninfo "dbname=$db" >/dev/null || fail "the chain does not verify after migration 21"
[ "$(run -c "SELECT after ->> 'amount_cents' FROM redrive.audit_log WHERE action = 'compensate_request'")" = 1500 ] \
    || fail "the old audit entry was rewritten"
[ "$(run -c "SELECT amount_minor FROM redrive.compensation_list")" = 1500 ] \
    || fail "the amount is not 1500 under its new name"
[ "$(run -c "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'redrive'
                AND table_name = 'payment_list' AND column_name = 'charged_cents'")" = 1 ] \
    || fail "the site's payment_list was changed"

# After it: by the new parameter name, capped by the site's view (5000 charged), audited as
# amount_minor; the old name is gone.
as_support -c "SELECT redrive.request_compensation(p_action_id => gen_random_uuid(),
                   p_target_type => 'dead_letter', p_target_id => $dl2, p_version => 1,
                   p_kind => 'refund', p_amount_minor => 5001, p_reason => 'too much')" \
    >/dev/null 2>&1 && fail "5001 of 5000 was accepted"
as_support -c "SELECT redrive.request_compensation(p_action_id => gen_random_uuid(),
                   p_target_type => 'dead_letter', p_target_id => $dl2, p_version => 1,
                   p_kind => 'refund', p_amount_cents => 2500, p_reason => 'old name')" \
    >/dev/null 2>&1 && fail "the old parameter name still resolves"
as_support -c "SELECT redrive.request_compensation(p_action_id => gen_random_uuid(),
                   p_target_type => 'dead_letter', p_target_id => $dl2, p_version => 1,
                   p_kind => 'refund', p_amount_minor => 2500, p_reason => 'order cancelled')" >/dev/null
[ "$(run -c "SELECT (after ->> 'amount_minor') || ' ' || (after ? 'amount_cents')::text
               FROM redrive.audit_log WHERE action = 'compensate_request' ORDER BY id DESC LIMIT 1")" = "2500 false" ] \
    || fail "the new audit entry does not say amount_minor only"
"$redrive" verify-audit --conninfo "dbname=$db" >/dev/null || fail "the chain does not verify at the end"
echo "cli_upgrade_minor_units: ok"
