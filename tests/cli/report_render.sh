#!/usr/bin/env bash
# Renders a run's report.html in headless Chromium and checks that the page and its figures
# are drawn: the screenshot exists, is not blank, and has the many colours of the heatmaps.
# Skips (loudly, exit 0) when chromium is not installed.
#   tests/cli/report_render.sh BUILD_DIR
set -uo pipefail
bin="${1:?usage: report_render.sh BUILD_DIR}/attnlab"
py=/usr/bin/python3
if ! command -v chromium >/dev/null 2>&1; then
  echo "SKIP report_render.sh: chromium is not installed (apt-get install chromium) -- NOT TESTED"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" run mha-heads --out "$tmp/run" >/dev/null || { echo "FAIL: attnlab run mha-heads"; exit 1; }
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$tmp/profile" --screenshot="$tmp/shot.png" --window-size=1200,2000 \
  "file://$tmp/run/report.html" >"$tmp/chromium.log" 2>&1
if [[ ! -s "$tmp/shot.png" ]]; then
  echo "FAIL: chromium wrote no screenshot"; tail -5 "$tmp/chromium.log"; exit 1
fi
"$py" - "$tmp/shot.png" <<'PYEOF'
import sys
path = sys.argv[1]
try:
    import numpy as np
    from PIL import Image
except ImportError:
    import os
    size = os.path.getsize(path)  # a blank 1200x2000 PNG compresses to a few KB
    assert size > 40_000, f"screenshot only {size} bytes: blank?"
    print(f"PASS report renders: {size} bytes (numpy/PIL missing: size check only)")
    sys.exit(0)
img = np.asarray(Image.open(path).convert("RGB"))
assert img.shape[0] >= 1000 and img.shape[1] >= 1000, img.shape
ink = (img.min(axis=2) < 200).mean()  # share of pixels that are not near-white
colours = len(np.unique(img.reshape(-1, 3), axis=0))
# the heatmap grid: viridis purples/greens, i.e. pixels where green or blue clearly beat red
viridis_like = ((img[:, :, 1].astype(int) - img[:, :, 0] > 30) |
                (img[:, :, 2].astype(int) - img[:, :, 0] > 30)).mean()
print(f"screenshot {img.shape[1]}x{img.shape[0]}: {ink:.1%} ink, {colours} colours, "
      f"{viridis_like:.1%} heatmap-coloured")
assert ink > 0.05, "page looks blank"
assert colours > 200, "too few colours: figures missing?"
assert viridis_like > 0.02, "no heatmap colours: the SVG figures did not render"
print("PASS report.html renders with its figures")
PYEOF
