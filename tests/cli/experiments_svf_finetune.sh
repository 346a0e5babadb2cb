#!/usr/bin/env bash
# svf-finetune (004 §4.2, Transformer²) in quick mode: the trainable parameters of each method are
# counted from its modules (SVF: one z entry per singular value, fewer than LoRA rank 1), the base
# model learns its task in 60 steps, and every accuracy of the mixed set is a rate.
#   tests/cli/experiments_svf_finetune.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed svf-finetune "004 §4.2"
expect 2 "--task_a and --task_b are both reverse" run svf-finetune --task_b reverse --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused svf-finetune wrote $tmp/bad" || pass "no folder for bad"
expect 2 "--lora_ranks 40 is outside [1, 32]" run svf-finetune --lora_ranks 1,40 --out "$tmp/bad2"
expect 2 "--nhead 3 must divide --d_model 32" run svf-finetune --nhead 3 --out "$tmp/bad3"
check svf-finetune '
# d_model 32, dim_ff 64, 2 layers; per layer q, k, v, out (32x32), ff1 (64x32), ff2 (32x64).
assert res["svf_trainable"] == res["svf_expected_trainable"] == 2 * (4 * 32 + 32 + 32), res
assert res["lora_r1_trainable"] == 2 * (4 * 64 + 2 * 96), res
assert res["lora_r4_trainable"] == 4 * res["lora_r1_trainable"], res
assert res["full_trainable"] > res["lora_r4_trainable"], res
assert min(res["base_accuracy_a"]) >= 0.9, res          # reversal is learned in 60 steps
assert max(res["base_accuracy_b"]) <= 0.5, res          # and sorting is not reversal
for k in ("only_a", "only_b", "best_mix", "two_pass", "oracle", "first_pass", "alpha"):
    assert len(res["mixed_" + k]) == 2 and all(0 <= v <= 1 for v in res["mixed_" + k]), k
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert len(rows) == 5, rows
assert rows["SVF trains one z entry per singular value: sum of min(out, in) over the matrices"]["outcome"] == "ok", rows
assert rows["SVF trains fewer parameters than LoRA of the smallest rank"]["outcome"] == "ok", rows
'
finish
