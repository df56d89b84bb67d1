#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CI check of the Debian package, run by .ci/run after the tests, as root:
# builds the .deb with CPack in BUILD_DIR, checks its contents and computed dependencies,
# installs it with apt-get (so the dependencies resolve), and runs the installed programs:
# --version, and --screenshot offscreen against a throwaway PostgreSQL with a small demo world,
# connected as a login that holds only redrive_oncall (so the grants are checked too).
# Usage: installer/check_package.sh [BUILD_DIR]   (default: build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m -- "${1:-${REDRIVE_BUILD_DIR:-$root/build}}")

say() { echo "check_package: $*"; }
fail() { echo "check_package: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (it installs the package)"

# --- Build the package ---------------------------------------------------------------------------
rm -f "$build"/redrive_*.deb
cmake --build "$build" --target package -j2
debs=("$build"/redrive_*.deb)
[ "${#debs[@]}" -eq 1 ] && [ -f "${debs[0]}" ] || fail "expected one redrive_*.deb in $build"
deb=${debs[0]}
say "built $deb ($(du -h "$deb" | cut -f1))"

# --- Its contents ------------------------------------------------------------------------------
listing=$(dpkg-deb -c "$deb")
echo "$listing"
paths=$(awk '{print $NF}' <<<"$listing" | sed 's|^\./|/|')
expected=(
    /usr/bin/redrive
    /usr/bin/redrive-worker
    /usr/share/applications/redrive.desktop
    /usr/share/icons/hicolor/scalable/apps/redrive.svg
    /usr/share/metainfo/io.redrive.Redrive.metainfo.xml
    /usr/share/man/man1/redrive.1.gz
    /usr/share/man/man1/redrive-worker.1.gz
    /usr/share/doc/redrive/copyright
)
for size in 16 22 24 32 48 64 128 256; do
    expected+=("/usr/share/icons/hicolor/${size}x${size}/apps/redrive.png")
done
for p in "${expected[@]}"; do
    grep -qxF "$p" <<<"$paths" || fail "$p is not in the package"
done
# Only the two programs: no tests, no benchmarks, no static library, nothing outside /usr.
unexpected=$(grep -v '/$' <<<"$paths" | grep -vxF -f <(printf '%s\n' "${expected[@]}") || true)
[ -z "$unexpected" ] || fail "unexpected files in the package:"$'\n'"$unexpected"
say "contents as expected (${#expected[@]} files)"

depends=$(dpkg-deb -f "$deb" Depends)
say "Depends: $depends"
for lib in libpq5 libqt6core6 libqt6gui6 libqt6widgets6 libqcustomplot2.1-qt6; do
    grep -qE "(^|, )$lib( |,|$)" <<<"$depends" || fail "Depends lacks $lib"
done

# --- Install it and run what it installed ------------------------------------------------------
if dpkg-query -W -f='${Status}' redrive 2>/dev/null | grep -q "install ok installed"; then
    dpkg --remove redrive
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb"
dpkg-query -W -f='${Status}\n' redrive | grep -q "install ok installed" || fail "not installed"
/usr/bin/redrive --version
/usr/bin/redrive --help >/dev/null
/usr/bin/redrive-worker --version
[ "$(/usr/bin/redrive --version)" = "redrive $(dpkg-query -W -f='${Version}' redrive)" ] \
    || fail "redrive --version does not match the package version"
grep -qxF 'License: GPL-3.0-or-later' /usr/share/doc/redrive/copyright \
    || fail "the installed copyright file does not name GPL-3.0-or-later"
for page in redrive redrive-worker; do
    zcat "/usr/share/man/man1/$page.1.gz" | grep -q '^\.TH' || fail "man page $page is not troff"
done
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate /usr/share/applications/redrive.desktop
fi
if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net /usr/share/metainfo/io.redrive.Redrive.metainfo.xml
fi

# --- Against a database ------------------------------------------------------------------------
tmp=$(mktemp -d /tmp/redrive-package.XXXXXX)
cluster=$root/tests/support/pg_test_cluster.sh
cleanup() {
    "$cluster" stop "$tmp/pg" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
"$cluster" start "$tmp/pg"
set -a
# shellcheck disable=SC1091
. "$tmp/pg/env"
set +a
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE redrive_ci"
/usr/bin/redrive migrate --conninfo dbname=redrive_ci
/usr/bin/redrive-worker demo --seed 7 --orders 300 --conninfo dbname=redrive_ci >"$tmp/demo.log" \
    || { cat "$tmp/demo.log" >&2; fail "redrive-worker demo"; }
grep '^redrive-worker demo: world' "$tmp/demo.log"
psql -X -q -v ON_ERROR_STOP=1 -d redrive_ci \
    -c "CREATE ROLE ci_oncall LOGIN IN ROLE redrive_oncall"
open=$(psql -X -At -d redrive_ci -c "SELECT count(*) FROM redrive.dead_letter_list")
say "$open dead letters in the demo world"
[ "$open" -gt 0 ] || fail "the demo world has no dead letters"

png=$tmp/x.png
mkdir -p "$tmp/config"
rc=0
out=$(XDG_CONFIG_HOME=$tmp/config QT_QPA_PLATFORM=offscreen \
      /usr/bin/redrive --screenshot "$png" --conninfo "dbname=redrive_ci user=ci_oncall") || rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "redrive --screenshot exited with $rc"
[ -s "$png" ] || fail "no PNG written"
shown=$(sed -n 's/.*(\([0-9]*\) dead letters shown).*/\1/p' <<<"$out")
[ "${shown:-0}" -gt 0 ] || fail "the screenshot shows no dead letters"
# A real picture: a PNG signature, a window-sized IHDR and more than a blank window's bytes.
python3 - "$png" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
width, height = struct.unpack(">II", data[16:24])
assert width >= 800 and height >= 500, f"only {width}x{height}"
assert len(data) > 30000, f"only {len(data)} bytes: an empty window?"
print(f"check_package: screenshot {width}x{height}, {len(data)} bytes")
PY
say "OK"
