#!/usr/bin/env bash
# softmax-dispersion and linear-vs-softmax-recall in quick mode (004 §2.4, §2.5, §4.2; 000 §8.2).
# softmax-dispersion: every weight from the softmax op matches the closed form (recomputed here
# from the float32 logits) within the a priori float32 bound, the max weight falls and the
# entropy rises with N, and the log-N temperature holds the max weight near gap log m only.
#   tests/cli/experiments_softmax_recall.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

check softmax-dispersion '
import math
import numpy as np
n, g, m = res["n"], res["gap"], res["train_length"]
assert n == [2.0 ** k for k in range(1, 13)] and g == 4 and m == 64, (n, g, m)
def closed(x, N):  # x: the logit as the op saw it (float32)
    x = float(np.float32(x))
    rest = (N - 1) * math.exp(-x)
    p = 1 / (1 + rest)
    return p, rest * p * x - math.log(p)
for key, scaled in (("", False), ("_scaled", True)):
    for i, N in enumerate(n):
        s = math.log(N) / math.log(m) if scaled else 1.0
        p, h = closed(s * g, N)
        assert abs(res["closed_max_weight" + key][i] - p) <= 1e-12 * p, (key, N)
        assert abs(res["closed_entropy" + key][i] - h) <= 1e-12 * max(h, 1), (key, N)
# ours vs the closed form: within the bound gamma_(N+10) for float32, on every N
u = 2.0 ** -24
for i, N in enumerate(n + n):
    k = (N + 10) * u
    assert abs(res["max_weight_rel_bound"][i] - k / (1 - k)) <= 1e-15, i
    assert res["max_weight_rel_error"][i] <= res["max_weight_rel_bound"][i], (i, N)
    assert res["entropy_abs_error"][i] <= res["entropy_abs_bound"][i], (i, N)
assert res["worst_error_over_bound"] <= 1, res["worst_error_over_bound"]
# dispersion: at a fixed gap the max weight falls and the entropy rises, towards 1/N and log N
mw, h = res["max_weight"], res["entropy"]
assert all(b < a for a, b in zip(mw, mw[1:])) and all(b > a for a, b in zip(h, h[1:])), (mw, h)
assert -1.05 < res["max_weight_slope"] < -0.9, res["max_weight_slope"]
# the log-N temperature at gap 4 (near log 64): the max weight stays within x2, entropy grows less
assert 0.5 <= res["max_weight_ratio_top_over_m_scaled"] <= 2, res
assert res["max_weight_ratio_top_over_m"] < 0.05, res
assert 0 < res["entropy_change_m_to_top_scaled"] < res["entropy_change_m_to_top"], res
assert abs(res["fixed_point_gap"] - math.log(64)) < 1e-12
# the sweep: held at 4 and 8, not at 2; limits min(0, g / log m - 1)
assert res["gaps"] == [2, 4, 8], res["gaps"]
held = [0.5 <= r <= 2 for r in res["sweep_max_ratio_scaled"]]
assert held == [False, True, True], res["sweep_max_ratio_scaled"]
for gg, lim in zip(res["gaps"], res["sweep_limit_slope_scaled"]):
    assert abs(lim - min(0, gg / math.log(64) - 1)) < 1e-12, (gg, lim)
assert len(r["figures"]) == 3, r["figures"]
e = {x["name"]: x for x in cmp[0]["entries"]}
st = [x["status"] for x in cmp[0]["entries"]]
assert st == ["ok", "ok", "ok", "ok", "DIFFERS"], st
inv = cmp[0]["entries"][4]
assert abs(inv["ours"] - res["entropy_change_m_to_top_scaled"]) < 1e-12, inv
top = res["max_weight_scaled"][-1]
assert f"ends at {top:.3f}" in inv["reason"], inv["reason"]
'

finish
