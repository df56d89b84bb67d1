#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Renders redrive.svg into the PNG sizes the .deb installs (hicolor theme). The PNGs are committed,
# so the build needs no SVG renderer; run this again after editing the SVG.
# Needs rsvg-convert (apt-get install librsvg2-bin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v rsvg-convert >/dev/null || { echo "render_icons: apt-get install librsvg2-bin" >&2; exit 1; }
for size in 16 22 24 32 48 64 128 256; do
    mkdir -p "$here/hicolor/${size}x${size}"
    rsvg-convert --width "$size" --height "$size" "$here/redrive.svg" \
        --output "$here/hicolor/${size}x${size}/redrive.png"
done
echo "render_icons: wrote the PNGs under $here/hicolor"
