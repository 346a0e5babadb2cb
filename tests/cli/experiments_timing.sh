#!/usr/bin/env bash
# rnn-vs-attention and linear-attention in quick mode. Timings depend on the machine and its load,
# so nothing here compares one time with another: the checks are on structure (every length and
# thread count timed, every time positive, ratios consistent with the times they come from), on
# the exact FLOP counts, and on the fast-weight equivalence (recurrent, prefix-sum and T x T forms
# of causal linear attention agree, outputs and gradients, to float32 round-off).
#   tests/cli/experiments_timing.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

check rnn-vs-attention '
import math
c = cfg["config"]
T, threads = c["lengths"], c["threads_list"]
assert res["lengths"] == T and res["threads_list"] == threads, res
assert T == [16, 64, 256] and threads == [1, 2], (T, threads)
for p in ("fwd", "fwdbwd"):
    for n in threads:
        k = f"{p}_{n}t"
        rnn, att, ratio = res["rnn_ms_" + k], res["attention_ms_" + k], res["ratio_" + k]
        rmin, amin = res["rnn_min_ms_" + k], res["attention_min_ms_" + k]
        for xs in (rnn, att, ratio, rmin, amin):
            assert len(xs) == len(T) and all(math.isfinite(x) and x > 0 for x in xs), (k, xs)
        for i in range(len(T)):
            assert abs(ratio[i] - rnn[i] / att[i]) <= 1e-9 * ratio[i], (k, i)
            assert rmin[i] <= rnn[i] and amin[i] <= att[i], (k, i)
for key in ("attention_faster_everywhere_fwd", "ratio_peaks_inside_fwd"):
    assert isinstance(res[key], bool), key
assert res["ratio_peak_T_fwd"] in T
assert math.isfinite(res["rnn_growth_exponent_fwd"]) and math.isfinite(res["attention_growth_exponent_fwd"])
assert len(r["figures"]) == 3, r["figures"]
names = [e["name"] for e in cmp[0]["entries"]]
assert "attention faster at every T" in names, names
'

check linear-attention '
import math
c = cfg["config"]
T, d = c["lengths"], c["d"]
assert res["lengths"] == T == [16, 64, 256, 1024] and d == 64, (T, d)
# the FLOP counts, exactly: softmax 4T^2d + 5T^2, linear 4Td^2 + 8Td + T
assert res["flops_softmax"] == [4 * t * t * d + 5 * t * t for t in T], res["flops_softmax"]
assert res["flops_linear"] == [4 * t * d * d + 8 * t * d + t for t in T], res["flops_linear"]
assert abs(res["flop_crossover_T"] - (4 * d * d + 8 * d + 1) / (4 * d + 5)) < 1e-9
# every form timed at every length (the step-by-step loop only up to recurrent_max_t)
for key in ("softmax_ms", "softmax_causal_ms", "linear_ms", "linear_causal_ms"):
    assert len(res[key]) == len(T) and all(x > 0 for x in res[key]), (key, res[key])
for t, x in zip(T, res["recurrent_ms"]):
    assert (x is not None and x > 0) if t <= c["recurrent_max_t"] else x is None, (t, x)
for key in ("softmax_growth_exponent", "linear_growth_exponent"):
    assert math.isfinite(res[key]), key
# fast weights = causal linear attention: outputs and gradients agree to float32 round-off
for pair in ("recurrent_vs_parallel", "quadratic_vs_parallel", "noncausal_quadratic_vs_parallel"):
    for g in ("y", "dq", "dk", "dv"):
        x = res[f"diff_{pair}_{g}"]
        assert 0 <= x < 1e-4, (pair, g, x)
assert res["relative_diff_fast_weight_state_vs_KtV"] < 1e-5, res
assert len(r["figures"]) == 2, r["figures"]
e = {x["name"]: x for x in cmp[0]["entries"]}
assert e["FLOP crossover T* / d"]["status"] == "ok", e
assert e["fast-weight loop vs parallel causal, max |y diff|"]["status"] == "ok", e
'

finish
