#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Regenerates the README's screenshots from the demo world (seed 7), offscreen, into
# installer/screenshots/: main-window.png (the triage table as demo_oncall) and case-view.png
# (the case view of an ambiguous failure: the case a person must decide). Same setup as
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

# Smaller files for the repository, when pngquant is at hand (lossy, 256 colours).
if command -v pngquant >/dev/null; then
    pngquant --force --skip-if-larger --strip --quality 80-100 --ext .png \
        "$out/main-window.png" "$out/case-view.png" || true
fi
ls -l "$out"/main-window.png "$out"/case-view.png
