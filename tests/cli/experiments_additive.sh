#!/usr/bin/env bash
# additive-vs-dot (004 §2.3, §1.1) in quick mode: both score functions learn reversal (held-out
# exact match well above chance, with margin), every score-step cell has positive times and the
# additive memory above the dot product's, the memory ratio grows with d_h (the (B,H,T,S,d_h)
# tensor: an exponent near 1, checked loosely). Times are reported, not judged: speed belongs
# to benchmarks, and a loaded machine can invert any timing. Bad settings exit 2 and leave no
# run folder.
#   tests/cli/experiments_additive.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed additive-vs-dot "004 §2.3, §1.1 "

expect 2 "--nhead 5 must divide --d_model 64" run additive-vs-dot --nhead 5 --out "$tmp/bad1"
expect 2 "--lengths and --head_dims need at least two values" run additive-vs-dot --lengths 64 \
  --out "$tmp/bad2"
for d in bad1 bad2; do
  [[ -e "$tmp/$d" ]] && fail "a refused additive-vs-dot wrote $tmp/$d" || pass "no folder for $d"
done
# the train command accepts the score and refuses a misspelt one
expect 2 "score" train reversal --score concat --steps 1 --out "$tmp/bad3"

check additive-vs-dot '
# 1. both models learn reversal (chance is far below 0.5 for 8-16 characters)
for k in ("dot_exact_match", "additive_exact_match"):
    assert res[k] >= 0.8, (k, res[k])
assert abs(res["additive_minus_dot_exact_match"]
           - (res["additive_exact_match"] - res["dot_exact_match"])) < 1e-12
# 2. time per training step: measured, both positive
assert res["step_ms_dot"] > 0 and res["step_ms_additive"] > 0, res
# 3. the score step: shapes of the sweeps, memory above the dot product, growing with d_h
for key in ("by_T", "by_d"):
    n = len(res["score_%s_values" % key])
    for f in ("dot_ms", "additive_ms", "time_ratio", "memory_ratio", "dot_bytes",
              "additive_bytes"):
        v = res["score_%s_%s" % (key, f)]
        assert len(v) == n and all(x > 0 for x in v), (key, f, v)
    assert all(m > 2 for m in res["score_%s_memory_ratio" % key]), res
mem = res["score_by_d_memory_ratio"]
assert all(b > a for a, b in zip(mem, mem[1:])), mem
assert 0.6 < res["memory_ratio_growth_exponent_in_d"] < 1.4, res
assert res["min_score_time_ratio"] <= res["typical_score_time_ratio"], res
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
for k, s in st.items():
    if "memory-efficient" in k:
        assert s == "ok", (k, st)
assert len(r["figures"]) == 3, r["figures"]
'

finish
