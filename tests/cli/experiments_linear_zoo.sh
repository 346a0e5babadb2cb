#!/usr/bin/env bash
# linear-zoo (004 §0x04 4.1-4.2) in quick mode: every member trains and is timed; the linear
# members' memory grows about linearly in T (PolaFormer, TransNormer, SANA, plain linear) and
# slower than softmax's (PolaFormer's two streams of 2D features still hold more than softmax at
# T = 512); the dilated heads put no weight off their interval lattice and one
# layer reaches (keys - 1) x dilation back, twice as far as local heads with the same keys; the
# trained rows' entropy and largest weight are read for every member that has rows. No timing
# and no accuracy assertions beyond what the quick budget settles. Bad settings exit 2 and leave
# no run folder.
#   tests/cli/experiments_linear_zoo.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed linear-zoo "004 §0x04 4\.1 "

expect 2 "linear-zoo: --variants: unknown 'lightning'" run linear-zoo --variants softmax,lightning \
  --out "$tmp/bad1"
expect 2 "linear-zoo: --variants: 'sana' twice" run linear-zoo --variants sana,sana --out "$tmp/bad2"
expect 2 "linear-zoo: --d_model / --nhead must be even" run linear-zoo --d_model 30 --nhead 2 \
  --out "$tmp/bad3"
for d in bad1 bad2 bad3; do
  [[ -e "$tmp/$d" ]] && fail "a refused linear-zoo wrote $tmp/$d" || pass "no folder for $d"
done

check linear-zoo '
names = ["softmax", "linear", "atrous", "local-dilated", "polaformer", "transnormer", "sana",
         "awrsr-simple", "awrsr-additive"]
lengths = res["lengths"]
for n in names:
    for k in ("recall_accuracy_", "long_accuracy_"):
        assert 0 <= res[k + n] <= 1, (k, n, res[k + n])
    assert len(res["step_ms_" + n]) == len(lengths) and min(res["step_ms_" + n]) > 0, n
slope = lambda n: res["memory_slope_" + n]
for n in ("linear", "polaformer", "transnormer", "sana"):
    assert 0.8 < slope(n) < 1.2, (n, slope(n))
    assert slope("softmax") > slope(n) + 0.3, (n, slope(n), slope("softmax"))
# every member with rows has them read; a causal row of T keys has entropy in [0, log T]
for n in names:
    if n == "transnormer":
        assert "row_entropy_transnormer" not in res
        continue
    assert 0 <= res["row_entropy_" + n] <= 3.0, (n, res["row_entropy_" + n])
    assert 0 < res["row_max_weight_" + n] <= 1, n
assert res["reach_farthest_atrous"] == 6 and res["reach_farthest_local"] == 3, res
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
assert st["atrous: a query reads keys at equal intervals only (trained weights off the interval lattice)"] == "ok", st
assert st["atrous: 4 keys 2 apart reach 6 positions back in one layer"] == "ok", st
assert st["polaformer: two linear streams, still O(T) (memory exponent)"] == "ok", st
assert 0 <= res["recall_accuracy_linear_no_positions"] <= 1
assert len(r["figures"]) == 3, r["figures"]
'

finish
