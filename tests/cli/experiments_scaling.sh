#!/usr/bin/env bash
# scaling-law in quick mode (003, scaling laws): every size is reported with its non-embedding
# parameter count; the fitted L(N) = a N^-alpha + c and L(D) exist and are finite with
# intervals in order and a floor no higher than the best loss; the largest model ends clearly
# below the smallest (the quick sizes span 8 to 48 wide, ~64x in N, and the smallest cannot fit
# the grammar); the compute frontier and the document comparison are present. Bad settings
# exit 2 naming the flag and leave no run folder.
#   tests/cli/experiments_scaling.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed scaling-law "003 \(GPT; Scaling laws and emergent abilities\) "

expect 2 "--d_models has 5 sizes but --layers has 4" run scaling-law --d_models 8,16,24,32,48 \
  --layers 1,1,2,2 --out "$tmp/bad1"
expect 2 "--head_dim 8 must divide every width in --d_models (not 20)" run scaling-law \
  --d_models 8,16,20,32 --layers 1,1,1,1 --out "$tmp/bad2"
expect 2 "fit at least 4 sizes" run scaling-law --d_models 8,16,32 --layers 1,1,1 --out "$tmp/bad3"
expect 2 "--steps 100 must be more than twice --warmup 50" run scaling-law --steps 100 \
  --out "$tmp/bad4"
expect 2 "the loss-against-tokens fit needs 4" run scaling-law --eval_points 4 --warmup 200 \
  --steps 1000 --out "$tmp/bad5"
expect 2 "fewer than --groups 16" run scaling-law --d_models 8,8,16,16 --layers 1,2,1,2 \
  --block_len 1200 --batch_size 1 --eval_size 16 --out "$tmp/bad6"
for d in bad1 bad2 bad3 bad4 bad5 bad6; do
  [[ -e "$tmp/$d" ]] && fail "a refused scaling-law wrote $tmp/$d" || pass "no folder for $d"
done

check scaling-law '
import math
sizes = res["sizes"]
assert len(sizes) == 5, sizes
n = [s["non_embedding_params"] for s in sizes]
assert n == sorted(n) and len(set(n)) == 5, n
for s in sizes:
    assert 0 < s["non_embedding_params"] < s["params"], s
    assert math.isfinite(s["final_loss"]) and s["final_loss"] > 0, s
# the fits exist, are finite, and their intervals are ordered
for key in ("fit_params", "fit_tokens"):
    f = res[key]
    for k in ("a", "exponent", "exponent_lo", "exponent_hi", "floor", "floor_lo", "floor_hi",
              "rms_residual", "r_squared"):
        assert isinstance(f[k], (int, float)) and math.isfinite(f[k]), (key, k, f)
    assert f["exponent"] > 0 and f["exponent_lo"] <= f["exponent_hi"], (key, f)
    assert 0 <= f["floor_lo"] <= f["floor_hi"], (key, f)
assert res["alpha_n"] == res["fit_params"]["exponent"], res
# the floor lies below every measured loss (up to the fit residual)
losses = [s["final_loss"] for s in sizes]
assert res["floor_n"] <= min(losses) + 3 * res["fit_params"]["rms_residual"], (res["floor_n"], losses)
# a bigger model is better: 48 wide and 2 blocks against 8 wide and 1 block
assert res["loss_largest"] < res["loss_smallest"] - 0.1, (res["loss_smallest"], res["loss_largest"])
assert res["loss_smallest"] == losses[0] and res["loss_largest"] == losses[-1], res
# the compute frontier: profiles present, each with at least 3 sizes
assert len(res["frontier"]) >= 1, res["frontier"]
for p in res["frontier"]:
    assert p["sizes"] >= 3 and p["compute"] > 0, p
names = [e["name"] for e in cmp[0]["entries"]]
assert any("power law in model size" in x for x in names), names
assert any("Kaplan" in x for x in names), names
assert len(r["figures"]) >= 4, r["figures"]
'

finish
