#!/usr/bin/env bash
# attention-rank (004 §2.4, §4.1) in quick mode: QK^T's numerical rank is d, softmax's is above
# d, linear attention's is d; softmax's rank grows with the logit scale; every layer's spectrum
# and every Linformer rank is measured (the trained rows are not judged at 30 steps).
#   tests/cli/experiments_attention_rank.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed attention-rank "004 §2.4, §4.1"
expect 2 "must exceed every --widths" run attention-rank --lengths 8,16 --widths 8 --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused attention-rank wrote $tmp/bad" || pass "no folder for bad"
expect 2 "must be below the recall length T = 14" run attention-rank --linformer_ranks 2,14 \
  --out "$tmp/bad2"
expect 2 "--top_k 64 must be below --block_len 64" run attention-rank --top_k 64 --out "$tmp/bad3"
check attention-rank '
for t in (16, 32):
    for d in (2, 4):
        key = "T%d_d%d" % (t, d)
        assert res["rank_scores_" + key] == d, (key, res)
        assert res["rank_linear_" + key] == d, (key, res)
        assert d < res["rank_softmax_" + key] <= t, (key, res)
        assert 0 < res["softmax_energy_beyond_d_" + key] < 1, (key, res)
by_scale = res["softmax_rank_by_logit_scale"]      # logit scales 0.01, 0.1, 1, 4
assert len(by_scale) == 4 and by_scale == sorted(by_scale) and by_scale[0] > 2, by_scale
for l in range(1, 5):
    e = res["top_energy_layer%d" % l]
    assert len(e) == 2 and all(0 < x <= 1 for x in e), (l, e)
    assert 0 < res["top_energy_untrained_layer%d" % l] <= 1, res
for k in (1, 4, 14):
    assert 0 <= res["linformer_accuracy_k%d" % k] <= 1, res
assert all(e["outcome"] == "ok" for e in cmp[0]["entries"]), cmp[0]
assert len(cmp[0]["entries"]) == 4 and len(cmp[1]["entries"]) == 9, cmp
'
finish
