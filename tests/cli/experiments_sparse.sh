#!/usr/bin/env bash
# hopfield-capacity (002 §39.4.3) in quick mode (d = 8, 16, 32; modern n up to 4096).
# The classical network's capacity per neuron, over the three d, lies within a generous band
# around the document's 0.14 (0.07 .. 0.28; measured near 0.14 on every seed tried); every d's
# capacity grows with d; the modern (softmax = attention) network holds at least 100x the
# classical one at d = 32; it never beats the nearest-neighbour ceiling (by more than sampling
# noise: 1.5x) and reaches at least a fifth of it where it was measured (d >= 16; at d = 8 the
# success curve is too flat near the level for a tight bound); attention's own scale
# 1/sqrt(d) holds fewer than beta = 1 but still more than the classical network at d = 32.
# Bad settings exit 2 and leave no run folder.
# sparse-challenge (003 Challenge) in quick mode (T = 32 .. 1024 timed, the models trained at
# T = 64 with window 4): the exact peak tensor bytes of one forward + backward grow linearly in T
# for banded attention (with or without two global tokens) and nearly quadratically for dense; the banded model stays at chance on
# match (no position sees both markers: structural, not a training outcome) and both learn
# majority. Timings are recorded but never asserted (they depend on the machine and its load).
# On the reference path (a Debug build's default) the banded layer is the masked dense one, and
# its memory must then grow like dense attention's.
#   tests/cli/experiments_sparse.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed hopfield-capacity "002 §39.4.3 "

expect 2 "--flip 0.5 flips half or more" run hopfield-capacity --flip 0.5 --out "$tmp/bad1"
expect 2 "it must be at least 2" run hopfield-capacity --dims 1,8 --out "$tmp/bad2"
for d in bad1 bad2; do
  [[ -e "$tmp/$d" ]] && fail "a refused hopfield-capacity wrote $tmp/$d" || pass "no folder for $d"
done

check hopfield-capacity '
dims = res["dims"]
# the attention call the modern network runs is the update written out in double, to rounding
assert 0 <= res["modern_update_gap"] < 1e-5, res["modern_update_gap"]
assert dims == [8, 16, 32], dims
cl, mo, at, nn = (res[k] for k in ("classical_capacity", "modern_capacity",
                                   "attention_capacity", "nearest_neighbour_capacity"))
# classical: linear in d near 0.14 d (a generous band), rising with d
assert 0.07 <= res["classical_per_neuron"] <= 0.28, res["classical_per_neuron"]
assert cl[0] < cl[1] < cl[2], cl
# modern >> classical at d = 32 (the quick grid ends at 4096, so that point may be a lower bound)
assert res["modern_over_classical_d"] == 32 and res["modern_over_classical"] >= 100, res
assert mo[2] >= 1000, mo
# no retrieval beats the nearest-neighbour ceiling; beta = 1 gets near it
for d, m, c, cens in zip(dims, mo, nn, res["modern_censored"]):
    assert m <= 1.5 * c, (d, m, c)
    if d >= 16 and not cens:
        assert m >= 0.2 * c, (d, m, c)
# attention scale 1/sqrt(d): between the two
assert cl[2] < at[2] < mo[2], (cl, at, mo)
assert res["curves"][0]["classical_rate"][0] == 1.0 and res["curves"][0]["modern_rate"][0] == 1.0
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
assert st["modern capacity >> classical (x100 at d = 32)"] == "ok", st
assert len(r["figures"]) == 3, r["figures"]
'

listed sparse-challenge "003 Challenge"
expect 2 "--lengths needs increasing lengths" run sparse-challenge --lengths 512,256 --out "$tmp/bad3"
expect 2 "must be at least 16" run sparse-challenge --train_lengths 8 --out "$tmp/bad4"
expect 2 "nhead" run sparse-challenge --nhead 3 --out "$tmp/bad5"
for d in bad3 bad4 bad5; do
  [[ -e "$tmp/$d" ]] && fail "a refused sparse-challenge wrote $tmp/$d" || pass "no folder for $d"
done

check sparse-challenge '
ts = res["lengths"]
assert ts == [32, 64, 128, 256, 512, 1024], ts
for k in ("step_ms_banded", "step_ms_dense", "step_ms_global", "peak_tensor_mib_banded",
          "peak_tensor_mib_dense", "peak_tensor_mib_global", "step_ratio_dense_over_banded"):
    assert len(res[k]) == len(ts) and all(v > 0 for v in res[k]), (k, res[k])
assert isinstance(res["crossover_text"], str) and res["crossover_text"], res
band, dense = res["peak_tensor_mib_banded"], res["peak_tensor_mib_dense"]
glob = res["peak_tensor_mib_global"]
if cfg["path"] == "reference":  # a Debug build: the banded layer is the masked dense (T,T) path
    assert res["memory_slope_banded"] >= 1.6 and band[-1] >= dense[-1] / 2, (band, dense)
else:
    # exact tensor bytes: banded doubles with T (the band is T x (2w+1)); dense grows ~T^2 once
    # the (B,H,T,T) weights dominate (measured x4.4 from 512 to 1024)
    for i in range(3, len(ts)):
        assert 1.8 <= band[i] / band[i - 1] <= 2.2, (ts[i], band)
    assert dense[-1] / dense[-2] >= 3.5, dense
    assert dense[-1] >= 3 * band[-1], (dense, band)
    assert 0.9 <= res["memory_slope_banded"] <= 1.1, res["memory_slope_banded"]
    # two global tokens add two full rows and two slots per row: a little more than the band,
    # still linear, far below dense
    for i in range(3, len(ts)):
        assert band[i] <= glob[i] <= 1.1 * band[i], (ts[i], glob, band)
        assert 1.8 <= glob[i] / glob[i - 1] <= 2.2, (ts[i], glob)
    assert 0.9 <= res["memory_slope_global"] <= 1.1, res["memory_slope_global"]
    st = {e["name"]: e["outcome"] for c in cmp if c["title"] == "003 Challenge vs ours"
          for e in c["entries"]}
    assert st["a local + sparse scheme: near-linear memory (exponent)"] == "ok", st
assert res["memory_slope_dense"] >= 1.6, res["memory_slope_dense"]
# accuracy at T = 64 (300 held-out examples, chance 0.5, standard error 0.03)
assert res["train_lengths"] == [64], res["train_lengths"]
assert res["match_accuracy_banded"][0] <= 0.62, res["match_accuracy_banded"]
assert res["majority_accuracy_banded"][0] >= 0.75, res["majority_accuracy_banded"]
assert res["majority_accuracy_dense"][0] >= 0.75, res["majority_accuracy_dense"]
# the two accuracy rows read part 1: at T = 64 with 2 layers of window 4, 4 L w = 32 < 64
acc = [c for c in cmp if c["title"] == "003 Challenge: accuracy"][0]["entries"]
assert [e["status"] for e in acc] == ["not judged", "not judged"], acc
assert "%.3f at T = 64" % res["match_accuracy_banded"][0] in acc[1]["reason"], acc[1]
assert len(r["figures"]) == 2, r["figures"]
'

finish
