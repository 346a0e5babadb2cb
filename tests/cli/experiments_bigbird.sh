#!/usr/bin/env bash
# sparse-challenge with BigBird's random links (--random_links 4: the third model reads the
# window, two global tokens and 4 random keys per query), quick mode. The third model's exact
# tensor memory still doubles with T (the links add 4 slots per row to the 2w+1 = 9 of the band
# and the global slots: more than the window alone, far below dense), its memory exponent is
# about 1, and the report says what it built. A negative --random_links exits 2 naming the flag and
# writes no run folder.
#   tests/cli/experiments_bigbird.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

expect 2 "random_links" run sparse-challenge --random_links -1 --out "$tmp/bad1"
[[ -e "$tmp/bad1" ]] && fail "a refused sparse-challenge wrote $tmp/bad1" || pass "no folder for bad1"

dir="$tmp/bigbird"
if ! "$bin" run sparse-challenge --quick --random_links 4 --threads 2 --out "$dir" \
  >"$tmp/bigbird.log" 2>&1; then
  fail "sparse-challenge --random_links 4 exited non-zero:"
  tail -20 "$tmp/bigbird.log"
elif "$py" - "$dir" <<'PYEOF'; then
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/results.json"))
cfg = json.load(open(d + "/config.json"))
res = r["results"]
assert r["status"] == "ok", r
assert res["random_links"] == 4, res["random_links"]
assert "random keys per query (BigBird)" in open(d + "/report.html").read()
ts = res["lengths"]
band, dense = res["peak_tensor_mib_banded"], res["peak_tensor_mib_dense"]
bigbird = res["peak_tensor_mib_global"]
if cfg["path"] != "reference":  # a Debug build runs every banded layer as masked dense (T,T)
    for i in range(3, len(ts)):
        # the links add slots beside the band and the global ones: more than the band, still
        # linear (doubling with T), far below dense at the longest T
        assert band[i] < bigbird[i] <= 1.5 * band[i], (ts[i], bigbird, band)
        assert 1.8 <= bigbird[i] / bigbird[i - 1] <= 2.2, (ts[i], bigbird)
    assert 0.9 <= res["memory_slope_global"] <= 1.1, res["memory_slope_global"]
    assert dense[-1] >= 2 * bigbird[-1], (dense, bigbird)
    st = {e["name"]: e["outcome"] for c in r["comparisons"] if c["title"] == "003 Challenge vs ours"
          for e in c["entries"]}
    assert st["local + global summary tokens + random links: near-linear memory (exponent)"] \
        == "ok", st
for k in ("majority_accuracy_global", "match_accuracy_global"):
    assert all(0 <= a <= 1 for a in res[k]), (k, res[k])
PYEOF
  pass "sparse-challenge --random_links 4 quick: key results ok ($(grep -o 'done in [0-9.]* s' "$tmp/bigbird.log"))"
else
  fail "sparse-challenge --random_links 4: key results (see above)"
fi

finish
