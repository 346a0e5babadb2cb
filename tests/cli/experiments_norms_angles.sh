#!/usr/bin/env bash
# norms-angles (004 §2.3, §4.1) in quick mode: two 4-layer RoPE character LMs trained 60 steps on
# 32 characters and read on 64; q and k recomputed from each block's input reproduce the block's
# own weights (the run fails otherwise), every number is in range, and already at 60 steps the
# angle, not the key norm, picks the keys.
#   tests/cli/experiments_norms_angles.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed norms-angles "004 §2.3"
expect 2 "--eval_len (32) must exceed --train_len (32)" run norms-angles --eval_len 32 \
  --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused norms-angles wrote $tmp/bad" || pass "no folder for bad"
expect 2 "--num_layers must be at least 3" run norms-angles --num_layers 2 --out "$tmp/bad2"
expect 2 "--recent 15 leaves no middle keys" run norms-angles --recent 15 --out "$tmp/bad3"
expect 2 "--positions" run norms-angles --positions alibi --out "$tmp/bad4"
check norms-angles '
for k in ("accuracy_in", "accuracy_out", "ks_q", "ks_k", "ks_cos", "tv_norm_only",
          "tv_angle_only", "entropy_rank_corr", "norm_growth", "angle_growth"):
    assert len(res[k]) == 2, (k, res[k])
for a in res["accuracy_in"] + res["accuracy_out"]:
    assert 0 < a < 1, res["accuracy_in"]
for k in ("ks_q", "ks_k", "ks_cos", "tv_norm_only", "tv_angle_only"):
    assert all(0 <= x <= 1 for x in res[k]), (k, res[k])
assert all(-1 <= x <= 1 for x in res["entropy_rank_corr"]), res["entropy_rank_corr"]
# the angle picks the keys: frozen angles miss the real rows by far more than frozen norms
assert all(n > a + 0.1 for n, a in zip(res["tv_norm_only"], res["tv_angle_only"])), res
for l in range(1, 5):
    for part in ("sink", "recent", "middle", "tv_uniform"):
        assert len(res[f"{part}_layer{l}"]) == 2 and min(res[f"{part}_layer{l}"]) > 0, (l, part)
assert "layer5" not in " ".join(res), res.keys()
assert [len(c["entries"]) for c in cmp] == [5, 3], [len(c["entries"]) for c in cmp]
rows = {e["name"]: e for e in cmp[0]["entries"]}
keys = "the norms select the keys: |k| alone rebuilds the rows closer than cos θ alone (total variation)"
assert rows[keys]["outcome"] == "DIFFERS", rows[keys]
'
finish
