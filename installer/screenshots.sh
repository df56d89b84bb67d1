#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Regenerates the README's screenshots from the demo world (seed 7), offscreen, into
# installer/screenshots/: main-window.png (the triage table as demo_oncall), case-view.png
# (the case view of an ambiguous failure: the case a person must decide), case-view-requeued.png
# (the retry history of a dead letter requeued and then succeeded), failure-groups.png (the
# groups with their counts, verdicts, trend and what tells look-alikes apart), and the compensation
# dialogs: compensation-request-{jpy,usd,kwd}.png and compensation-approval-{jpy,usd,kwd}.png
# (a refund for a dead letter's payment in yen, dollars and dinar, requested as demo_support and
# opened for approval as demo_approver) and compensation-request-duplicate.png (a double charge
# refunded from its mismatch, both provider charges side by side), and refund-1..5-*.png: the
# README's "A refund, step by step", done through the console's own dialogs. Same setup as
# installer/demo.sh (packages, build, throwaway PostgreSQL), which it stops again.
# Usage: bash installer/screenshots.sh [OUTPUT_DIR]
set -euo pipefail

# shellcheck source=installer/demo_lib.sh
. "$(dirname "$0")/demo_lib.sh"
out=$(realpath -m -- "${1:-$DEMO_ROOT/installer/screenshots}")

trap demo_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

demo_make_tmp
demo_ensure_packages
demo_ensure_build
demo_start_database 7
mkdir -p "$out" "$DEMO_TMP/config"

# A first-run layout, fixed locale and time zone, so the pictures only change when Redrive does.
shoot() {
    env XDG_CONFIG_HOME="$DEMO_TMP/config" QT_QPA_PLATFORM=offscreen LANG=C.UTF-8 LC_ALL=C.UTF-8 \
        TZ=UTC "$DEMO_REDRIVE" --conninfo "$(demo_conninfo oncall)" "$@"
}

shoot --screenshot "$out/main-window.png"

# An open dead letter whose last failure was ambiguous (the side effect may have happened), with
# the longest history: the case a person must decide, so the verdict box has something to say.
case_id=$(demo_admin psql -X -At -v ON_ERROR_STOP=1 -c "
    SELECT d.id
      FROM redrive.dead_letter_list d
     WHERE d.status = 'open' AND d.error_class = 'ambiguous'
     ORDER BY d.attempts DESC, d.id
     LIMIT 1")
[ -n "$case_id" ] || case_id=$(demo_admin psql -X -At -c \
    "SELECT id FROM redrive.dead_letter_list WHERE status = 'open' ORDER BY attempts DESC, id LIMIT 1")
[ -n "$case_id" ] || demo_die "the demo world has no open dead letter to show"

if "$DEMO_REDRIVE" --help | grep -q -- '--screenshot-case'; then
    shoot --screenshot "$out/case-view.png" --screenshot-case "$case_id"
else
    echo "redrive screenshots: this redrive has no --screenshot-case; case-view.png not made" >&2
    exit 1
fi

# A requeue's story: the retry history of a dead letter that was requeued and then succeeded
# (round 1 exhausted, the requeue marker, round 2), and the failure groups with every column.
requeued_id=$(demo_admin psql -X -At -v ON_ERROR_STOP=1 -c "
    SELECT d.id FROM redrive.dead_letter_list d
     WHERE d.resolution = 'succeeded_after_requeue'
     ORDER BY d.attempts DESC, d.id LIMIT 1")
[ -n "$requeued_id" ] || demo_die "the demo world has no dead letter that succeeded after a requeue"
shoot --screenshot "$out/case-view-requeued.png" --screenshot-case "$requeued_id" \
    --screenshot-case-tab "Retry history"
shoot --screenshot "$out/failure-groups.png" --screenshot-groups

# The compensation dialogs, as support (request) and as an approver (approval).
shoot_as() {
    local role=$1
    shift
    env XDG_CONFIG_HOME="$DEMO_TMP/config" QT_QPA_PLATFORM=offscreen LANG=C.UTF-8 LC_ALL=C.UTF-8 \
        TZ=UTC "$DEMO_REDRIVE" --conninfo "$(demo_conninfo "$role")" "$@"
}
as_support() {
    psql -X -At -v ON_ERROR_STOP=1 "$(demo_conninfo support)" "$@"
}
pictures=("$out/main-window.png" "$out/case-view.png" "$out/case-view-requeued.png"
          "$out/failure-groups.png")
for currency in JPY USD KWD; do
    lower=$(echo "$currency" | tr '[:upper:]' '[:lower:]')
    # An open dead letter of a payment in this currency with no open compensation, one whose
    # payload names the customer when one does, refundable at or above the currency's threshold
    # when one is (so its refund waits for a second person).
    pick=$(demo_admin psql -X -At -F ' ' -v ON_ERROR_STOP=1 -c "
        SELECT d.id, d.version, redrive.refundable_minor(p.payment_ref, p.charge_ref)
          FROM redrive.dead_letter_detail d
          JOIN redrive.payment_list p ON p.payment_ref = d.entity_id
         WHERE d.status = 'open' AND p.currency = '$currency'
           AND redrive.refundable_minor(p.payment_ref, p.charge_ref) > 0
           AND NOT EXISTS (SELECT 1 FROM redrive.compensation_request c
                            WHERE c.payment_ref = p.payment_ref
                              AND c.status IN ('pending_approval', 'approved', 'executing'))
         ORDER BY d.payload_text::jsonb ? 'customer' DESC,
                  redrive.refundable_minor(p.payment_ref, p.charge_ref)
                  >= redrive.approval_threshold_minor('$currency') DESC, d.id
         LIMIT 1")
    [ -n "$pick" ] || demo_die "the demo world has no open $currency payment dead letter"
    read -r dl version refundable <<<"$pick"
    # The demo world's charges are small: when this one is below the currency's threshold, lower
    # the threshold to it (audited, as an administrator would), so the request needs a second
    # person and the approval picture shows a decision rather than "nothing to decide".
    threshold=$(demo_admin psql -X -At -v ON_ERROR_STOP=1 \
        -c "SELECT redrive.approval_threshold_minor('$currency')")
    if [ "$refundable" -lt "$threshold" ]; then
        demo_admin psql -X -At -v ON_ERROR_STOP=1 -c "
            SELECT redrive.change_approval_threshold(gen_random_uuid(), '$currency', $refundable,
                       'screenshots: show a refund that needs a second person', 'screenshots')" \
            >/dev/null
    fi
    shoot_as support --screenshot "$out/compensation-request-$lower.png" \
        --screenshot-request "dead-letter:$dl"
    request=$(as_support -c "
        SELECT (redrive.request_compensation(gen_random_uuid(), 'dead_letter', $dl, $version,
                                             'refund', $refundable,
                                             'Order failed after the charge went through',
                                             'SUP-$dl', 'screenshots')::jsonb
                ->> 'compensation_id')")
    shoot_as approver --screenshot "$out/compensation-approval-$lower.png" \
        --screenshot-approval "$request"
    pictures+=("$out/compensation-request-$lower.png" "$out/compensation-approval-$lower.png")
done
# A double charge, refunded from its mismatch: an open duplicate_external whose payment has no
# open compensation.
dup=$(demo_admin psql -X -At -v ON_ERROR_STOP=1 -c "
    SELECT x.mismatch_id FROM redrive.mismatch_charge_list x
     WHERE x.kind = 'duplicate_external' AND x.status = 'open' AND x.suggested_minor > 0
       AND NOT EXISTS (SELECT 1 FROM redrive.compensation_request c
                        WHERE c.payment_ref = x.payment_ref
                          AND c.status IN ('pending_approval', 'approved', 'executing'))
     ORDER BY x.other_currency = 'JPY' DESC, x.mismatch_id LIMIT 1")
[ -n "$dup" ] || demo_die "the demo world has no open double charge"
shoot_as support --screenshot "$out/compensation-request-duplicate.png" \
    --screenshot-request "mismatch:$dup"
pictures+=("$out/compensation-request-duplicate.png")

# A refund, step by step (README): a customer gives support an order number; support finds the
# double charge with Ctrl+K, opens its mismatch, requests the refund of exactly the duplicate
# (the dialog's own Request button), and an approver approves it (the dialog's Approve button).
# The double charge is one whose duplicate is at or above its currency's threshold when there is
# one, so the refund needs a second person; otherwise the threshold is lowered to it, audited.
walk=$(demo_admin psql -X -At -F ' ' -v ON_ERROR_STOP=1 -c "
    SELECT x.mismatch_id, x.order_ref, x.suggested_minor, x.other_currency
      FROM redrive.mismatch_charge_list x
     WHERE x.kind = 'duplicate_external' AND x.status = 'open' AND x.suggested_minor > 0
       AND x.order_ref IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM redrive.compensation_request c
                        WHERE c.payment_ref = x.payment_ref
                          AND c.status IN ('pending_approval', 'approved', 'executing'))
     ORDER BY x.suggested_minor >= redrive.approval_threshold_minor(x.other_currency) DESC,
              x.other_currency = 'USD' DESC, x.mismatch_id
     LIMIT 1")
[ -n "$walk" ] || demo_die "the demo world has no open double charge with an order number"
read -r walk_mismatch walk_order walk_amount walk_currency <<<"$walk"
threshold=$(demo_admin psql -X -At -v ON_ERROR_STOP=1 \
    -c "SELECT redrive.approval_threshold_minor('$walk_currency')")
if [ "$walk_amount" -lt "$threshold" ]; then
    demo_admin psql -X -At -v ON_ERROR_STOP=1 -c "
        SELECT redrive.change_approval_threshold(gen_random_uuid(), '$walk_currency',
                   $walk_amount, 'screenshots: a refund that needs a second person',
                   'screenshots')" >/dev/null
fi
shoot_as support --screenshot "$out/refund-1-find.png" --screenshot-find "$walk_order"
shoot_as support --screenshot "$out/refund-2-mismatch.png" --screenshot-find "$walk_order" \
    --screenshot-open mismatch
requested=$(shoot_as support --screenshot "$out/refund-3-request.png" \
    --screenshot-request "mismatch:$walk_mismatch" \
    --submit "Customer was charged twice for $walk_order; refund the second charge" \
    --ticket "SUP-$walk_mismatch")
echo "$requested"
walk_request=$(sed -n 's/.*compensation_id \([0-9]*\).*/\1/p' <<<"$requested")
[ -n "$walk_request" ] || demo_die "the walk-through's refund was not requested"
shoot_as approver --screenshot "$out/refund-4-approval.png" \
    --screenshot-approval "$walk_request" \
    --submit "Two provider charges for one order; the one our ledger did not record is the duplicate"
shoot_as auditor --screenshot "$out/refund-5-audit.png" --screenshot-audit
pictures+=("$out/refund-1-find.png" "$out/refund-2-mismatch.png" "$out/refund-3-request.png"
           "$out/refund-4-approval.png" "$out/refund-5-audit.png")

# Smaller files for the repository, when pngquant is at hand (lossy, 256 colours).
if command -v pngquant >/dev/null; then
    pngquant --force --skip-if-larger --strip --quality 80-100 --ext .png "${pictures[@]}" || true
fi
ls -l "${pictures[@]}"
