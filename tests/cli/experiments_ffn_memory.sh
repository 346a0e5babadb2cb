#!/usr/bin/env bash
# ffn-memory (001, the transformer block) in quick mode: the last block's logits rebuilt from its
# keys and values equal the model's; the strongest keys each come with their top contexts and the
# characters their values promote; the fact models are trained at every width and seed.
#   tests/cli/experiments_ffn_memory.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed ffn-memory "001"
expect 2 "widths must hold at least two increasing" run ffn-memory --widths 32,8 --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused ffn-memory wrote $tmp/bad" || pass "no folder for bad"
expect 2 "fact_nhead 3 must divide --fact_d_model 32" run ffn-memory --fact_nhead 3 --out "$tmp/bad2"
check ffn-memory '
assert res["rebuild_gap"] < 1e-4, res["rebuild_gap"]
assert len(res["agreement_per_key"]) == 16, res
assert all(0 <= x <= 1 for x in res["agreement_per_key"]), res
assert abs(res["agreement"] - sum(res["agreement_per_key"]) / 16) < 1e-9, res
assert 0 <= res["agreement_shuffled_mean"] <= 1 and res["agreement_shuffled_sd"] >= 0, res
assert res["fact_widths"] == [8, 32, 128], res
assert len(res["fact_recall_mean"]) == 3 and all(0 <= x <= 1 for x in res["fact_recall_mean"]), res
assert res["heldout_nll"] > 0 and res["unigram_nll"] > 0, res
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert rows["logits rebuilt from the last block'"'"'s keys and values equal the model'"'"'s (max |diff|)"]["outcome"] == "ok", rows
assert len(cmp[1]["entries"]) == 3, cmp[1]
'
finish
