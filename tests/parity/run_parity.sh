#!/usr/bin/env bash
# PyTorch parity: dumps every registry row from attnlab, recomputes it in PyTorch, compares.
#   tests/parity/run_parity.sh BUILD_DIR
# Uses /usr/bin/python3 (Debian's torch). Without torch it says so loudly and skips.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$1
py=/usr/bin/python3
if ! "$py" -c "import torch, numpy" 2>/dev/null; then
  echo "!!! PARITY SKIPPED: /usr/bin/python3 cannot import torch and numpy (apt-get install python3-torch python3-numpy)"
  exit 0
fi
dump=$(mktemp -d)
trap 'rm -rf "$dump"' EXIT
"$bin/attn_parity_dump" "$dump/ops"
"$py" "$here/check_ops.py" "$dump/ops"
for extra in "$here"/check_*.py; do
  [[ "$(basename "$extra")" == check_ops.py ]] && continue
  "$py" "$extra" "$bin" "$dump"
done
