#!/usr/bin/env bash
# Every experiment of the registry in --quick mode, and what its comparison rows may say:
#  - no row says `ok` (nor DIFFERS): a --quick run cuts the settings for speed and judges no
#    claim, so every row is `not judged` with the reason "--quick run" (its "outcome" in
#    results.json still says how it came out);
#  - no numeric row has an "ours" equal to its document value bit for bit, unless the row says
#    ours is an exact quantity (a count, a size: Comparison::exact_quantity) or every value is an
#    integer (integer inputs through a matmul, a count: floats hold them exactly). A float
#    computation does not land exactly on a printed fraction: such a row copied the document's
#    number (or did arithmetic on it) instead of measuring.
# Runs one experiment after another (about 2 min on 2 cores).
#   tests/cli/experiments_claims.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listing=$("$bin" list) || { fail "attnlab list failed"; finish; }
names=$(awk 'NR > 2 && $1 ~ /^[a-z0-9]+(-[a-z0-9]+)*$/ {print $1}' <<<"$listing")
count=$(wc -w <<<"$names")
[[ $count -ge 40 ]] && pass "attnlab list: $count experiments" ||
  fail "attnlab list gave $count experiment names: $listing"

for name in $names; do
  dir="$tmp/$name"
  start=$SECONDS
  if ! "$bin" run "$name" --quick --threads 2 --out "$dir" >"$tmp/$name.log" 2>&1; then
    fail "$name --quick exited non-zero:"; tail -20 "$tmp/$name.log"; continue
  fi
  if out=$("$py" - "$dir/results.json" <<'PYEOF' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
rows = [e for c in r["comparisons"] for e in c["entries"]]
bad = []
for e in rows:
    if e["status"] != "not judged" or not e.get("not_judged", "").startswith("--quick run"):
        bad.append(f'{e["name"]!r}: status {e["status"]!r} in a --quick run')
    if "tolerance" in e and not e["exact_quantity"]:  # numeric rows
        doc, ours = e["document"], e["ours"]
        values = ours if isinstance(ours, list) else [ours]
        if all(isinstance(x, (int, float)) and float(x).is_integer() for x in values):
            continue  # integers: exact in float, a count or an integer computation
        # json reads back the exact doubles attnlab wrote (shortest round-trip form)
        if doc == ours or e["ours_is_document"]:
            bad.append(f'{e["name"]!r}: ours {ours!r} is the document value bit for bit')
if bad:
    print("\n".join(bad))
    sys.exit(1)
print(f"{len(rows)} rows")
PYEOF
  ); then
    pass "$name --quick: $out, none judged, no ours copied ($((SECONDS - start)) s)"
  else
    fail "$name --quick:"; echo "$out"
  fi
done

finish
