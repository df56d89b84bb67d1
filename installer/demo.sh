#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Redrive demo in one command, from a fresh clone on Debian 12 (as root, or a user with sudo
# for apt-get): installs what is missing, builds build/ when out of date, starts a throwaway
# PostgreSQL in a temporary folder, migrates it, fills it with the reference worker's demo world,
# creates one login role per Redrive role, keeps a reference worker running so requeues and
# compensations really execute, and opens the console. Closing the console (or Ctrl-C) stops
# everything it started and removes the folder.
set -euo pipefail

usage() {
    cat <<'USAGE'
Usage: bash installer/demo.sh [--as ROLE] [--screenshot FILE] [--seed N] [--orders N] [--keep]

  --as ROLE          open the console as demo_ROLE: oncall (default), support, approver,
                     approver2 (approver and support) or auditor
  --screenshot FILE  render the main window offscreen to a PNG and exit (no display needed)
  --seed N           the seed for the demo world's faults and jitter (default 7)
  --orders N         orders in the demo world (default 3000; fewer is faster)
  --keep             keep the temporary folder (server log, worker log) after exit

Every demo login's password is "demo". The database is thrown away on exit.
USAGE
}

role=oncall
screenshot=
seed=7
orders=
keep=false
while [ $# -gt 0 ]; do
    case "$1" in
    --as) role=${2:?--as needs a role}; shift 2 ;;
    --as=*) role=${1#--as=}; shift ;;
    --screenshot) screenshot=${2:?--screenshot needs a file}; shift 2 ;;
    --screenshot=*) screenshot=${1#--screenshot=}; shift ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    --seed=*) seed=${1#--seed=}; shift ;;
    --orders) orders=${2:?--orders needs a number}; shift 2 ;;
    --orders=*) orders=${1#--orders=}; shift ;;
    --keep) keep=true; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "redrive demo: unknown option '$1'" >&2; usage >&2; exit 64 ;;
    esac
done

# shellcheck source=installer/demo_lib.sh
. "$(dirname "$0")/demo_lib.sh"
DEMO_KEEP=$keep

[ -n "${DEMO_GRANTS[$role]+x}" ] || demo_die "--as takes one of: ${DEMO_ROLES[*]}"
case "$seed$orders" in *[!0-9]*) demo_die "--seed and --orders take whole numbers" ;; esac

# Without a display the console cannot open: say so before doing anything, and offer the
# offscreen path.
if [ -z "$screenshot" ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "redrive demo: no display (\$DISPLAY and \$WAYLAND_DISPLAY are empty), so the console" \
         "cannot open a window here." >&2
    cat >&2 <<'MSG'
  Render the main window offscreen to a PNG instead:
      bash installer/demo.sh --screenshot redrive-demo.png
  or run the whole demo in a virtual display:
      xvfb-run -a -s "-screen 0 1600x1000x24" bash installer/demo.sh
MSG
    if [ -t 0 ] && [ -t 2 ]; then
        read -r -p "Render redrive-demo.png now? [y/N] " answer
        case "$answer" in [yY]*) screenshot=redrive-demo.png ;; *) exit 2 ;; esac
    else
        exit 2
    fi
fi
[ -z "$screenshot" ] || screenshot=$(realpath -m -- "$screenshot")

trap demo_cleanup EXIT
trap 'echo; demo_say "interrupted; stopping everything"; exit 130' INT
trap 'exit 143' TERM HUP

demo_make_tmp
demo_ensure_packages
demo_ensure_build
demo_start_database "$seed" "$orders"

if [ -n "$screenshot" ]; then
    # A first-run layout, not whatever the last session saved.
    mkdir -p "$DEMO_TMP/config"
    XDG_CONFIG_HOME=$DEMO_TMP/config QT_QPA_PLATFORM=offscreen \
        "$DEMO_REDRIVE" --conninfo "$(demo_conninfo "$role")" --screenshot "$screenshot"
    demo_say "the main window as demo_$role is in $screenshot"
    exit 0
fi

demo_start_worker

echo
echo "Redrive demo is running."
echo "  database  host=127.0.0.1 port=$DEMO_PORT dbname=$DEMO_DB (throwaway, in $DEMO_TMP)"
echo "  worker    redrive-worker run, log in $DEMO_TMP/worker.log"
echo "  console   connected as demo_$role (${DEMO_ABOUT[$role]})"
echo
echo "Connect as another user from a second terminal while this runs (password \"$DEMO_PASSWORD\"):"
for other in "${DEMO_ROLES[@]}"; do
    [ "$other" = "$role" ] && continue
    printf '  # demo_%s, %s\n  %s --conninfo "%s"\n' "$other" "${DEMO_ABOUT[$other]}" \
        "$DEMO_REDRIVE" "$(demo_conninfo "$other")"
done
echo "or run this script again with --as support|approver|approver2|auditor|oncall."
echo "psql as the superuser: psql \"host=$DEMO_TMP/pg port=$DEMO_PORT user=postgres dbname=$DEMO_DB\""
echo
echo "Close the console window, or press Ctrl-C here, to stop everything."

status=0
"$DEMO_REDRIVE" --conninfo "$(demo_conninfo "$role")" || status=$?
demo_say "console closed; stopping the worker and the database"
exit "$status"
