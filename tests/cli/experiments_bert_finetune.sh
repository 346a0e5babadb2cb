#!/usr/bin/env bash
# bert-finetune (003 BERT) in quick mode: pre-training with masked LM and next-sentence
# prediction runs, both classifiers train with the same steps and labels, every row not judged.
#   tests/cli/experiments_bert_finetune.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed bert-finetune "003"
expect 2 "--nhead 3 must divide --d_model 64" run bert-finetune --nhead 3 --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused bert-finetune wrote $tmp/bad" || pass "no folder for bad"
expect 2 "seeds" run bert-finetune --seeds 0 --out "$tmp/bad2"
expect 1 "too few for next-sentence pairs" run bert-finetune --quick --sentences 200 \
  --out "$tmp/few"
check bert-finetune '
seeds = 2
for k in ("nsp_accuracy", "mlm_accuracy", "finetuned_accuracy", "scratch_accuracy"):
    assert len(res[k]) == seeds and all(0 <= a <= 1 for a in res[k]), (k, res[k])
# 60 steps of pre-training already predict masked words better than the commonest word
assert min(res["mlm_accuracy"]) > max(res["mlm_constant_accuracy"]), res
assert 0.5 < res["nsp_ceiling"] < 1, res
gains = [a - b for a, b in zip(res["finetuned_accuracy"], res["scratch_accuracy"])]
assert all(abs(g - h) < 1e-9 for g, h in zip(gains, res["finetune_gain"])), res
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert len(rows) == 2, rows
assert "003" in cmp[0]["title"], cmp[0]["title"]
'
finish
