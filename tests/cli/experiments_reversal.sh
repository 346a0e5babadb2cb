#!/usr/bin/env bash
# The reversal experiment in quick mode (the same 8-head model, 600-step schedule): it learns the
# task on held-out lengths 8-16, writes every role score in [0,1] for every layer and head of the
# three kinds of attention, and its cross-attention reads the source backwards — a head puts well
# above uniform attention mass on the mirrored source position.
#   tests/cli/experiments_reversal.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

expect 2 "must divide" run reversal --nhead 5 --out "$tmp/bad-heads"

check reversal '
assert res["exact_match"] >= 0.99, res["exact_match"]
by_len = res["exact_match_by_length"]
assert sorted(int(k) for k in by_len) == list(range(8, 17)), by_len
kinds = {"encoder_self": 7, "decoder_self": 3, "cross": 9}
for kind, patterns in kinds.items():
    rows = res["scores_" + kind]
    assert len(rows) == 2 * 8, (kind, len(rows))   # 2 layers x 8 heads
    for row in rows:
        scores = {k: v for k, v in row.items() if k not in ("layer", "head", "role")}
        assert len(scores) == patterns, (kind, row)
        assert all(0.0 <= v <= 1.0 + 1e-6 for v in scores.values()), (kind, row)
        assert row["role"] == "mixed" or row["role"] in scores, row
chance = res["chance_cross"]["backward"]
assert 0.05 < chance < 0.15, chance              # ~1/L for L in 8..16
assert res["best_backward_score"] >= 0.35, res["best_backward_score"]
assert res["best_backward_window_score"] >= 0.6, res["best_backward_window_score"]
assert res["best_forward_score"] < res["best_backward_score"]
assert len(res["cross_backward_heads"]) >= 1, res["cross_backward_heads"]
assert res["chance_cross"]["eos"] > 0, res["chance_cross"]   # the source ends with EOS by default
assert 0.0 <= res["best_eos_score"] <= 1.0, res["best_eos_score"]
c = {e["name"]: e for e in cmp[0]["entries"]}
assert c["a head reads the input backwards (cross-attention)"]["outcome"] == "ok", c
for stem in ("encoder_self", "decoder_self", "cross", "training_loss", "heldout_accuracy"):
    assert any(f.endswith(stem + ".svg") for f in r["figures"]), (stem, r["figures"])
'

finish
