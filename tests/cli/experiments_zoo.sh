#!/usr/bin/env bash
# attention-zoo (004 §0x04 4.1) in quick mode: every variant trains and is timed; the memory
# claims hold in exact tensor bytes (Linformer and Reformer grow about linearly in T and hold
# less than softmax attention at the longest length; softmax grows faster); the RoPE model reads
# its training length identically with plain and DCA indices, DCA keeps every distance below the
# training length, and beyond it DCA's loss is clearly lower than plain RoPE's. No timing
# assertions (the machine's load decides those). Bad settings exit 2 and leave no run folder.
#   tests/cli/experiments_zoo.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed attention-zoo "004 §0x04 4\.1 "

expect 2 "--variants: unknown 'bogus'" run attention-zoo --variants softmax,bogus --out "$tmp/bad1"
expect 2 "--variants: 'linformer' twice" run attention-zoo --variants linformer,linformer \
  --out "$tmp/bad2"
expect 2 "--lengths needs at least two increasing lengths" run attention-zoo --lengths 64 \
  --out "$tmp/bad3"
expect 2 "--nhead 3 must divide --d_model 32" run attention-zoo --nhead 3 --out "$tmp/bad4"
expect 2 "--recall_pairs must be at most 26" run attention-zoo --recall_pairs 30 --out "$tmp/bad5"
for d in bad1 bad2 bad3 bad4 bad5; do
  [[ -e "$tmp/$d" ]] && fail "a refused attention-zoo wrote $tmp/$d" || pass "no folder for $d"
done

check attention-zoo '
names = ["softmax", "linformer", "reformer-lsh", "synthesizer-dense", "synthesizer-random",
         "dual-chunk"]
lengths = res["lengths"]
assert len(lengths) >= 3, lengths
for n in names:
    for k in ("recall_accuracy_", "long_accuracy_"):
        assert 0 <= res[k + n] <= 1, (k, n, res[k + n])
    assert len(res["step_ms_" + n]) == len(lengths) and min(res["step_ms_" + n]) > 0, n
    assert len(res["peak_tensor_mib_" + n]) == len(lengths), n
mib = lambda n: res["peak_tensor_mib_" + n][-1]
slope = lambda n: res["memory_slope_" + n]
# exact tensor bytes: the compressed and hashed layers hold less at the longest length ...
assert mib("linformer") < 0.7 * mib("softmax"), (mib("linformer"), mib("softmax"))
assert mib("reformer-lsh") < 0.95 * mib("softmax"), (mib("reformer-lsh"), mib("softmax"))
# ... and grow about linearly, slower than softmax attention
for n in ("linformer", "reformer-lsh"):
    assert 0.8 < slope(n) < 1.15, (n, slope(n))
assert slope("softmax") > slope("linformer") + 0.3, (slope("softmax"), slope("linformer"))
assert slope("synthesizer-random") > slope("linformer") + 0.3, slope("synthesizer-random")
# the majority task is learnt by softmax attention in the quick budget (chance 0.5)
assert res["long_accuracy_softmax"] > 0.8, res["long_accuracy_softmax"]
# DCA: at the training length it is plain RoPE; its distances stay below the training length;
# beyond it the same weights read the text clearly better than with plain RoPE indices
assert res["rope_eval_lengths"][0] == 32
assert abs(res["rope_plain_accuracy"][0] - res["rope_dca_accuracy"][0]) < 0.01, res
assert res["dca_max_distance"] == 31, res["dca_max_distance"]
assert res["rope_dca_loss"][-1] < res["rope_plain_loss"][-1] - 0.2, res
assert res["rope_dca_accuracy"][-1] > res["rope_plain_accuracy"][-1], res
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
assert st["dual-chunk: relative distances never beyond training (largest)"] == "ok", st
assert st["linformer: k compressed keys make attention linear in T (memory exponent)"] == "ok", st
assert len(r["figures"]) == 4, r["figures"]
'

finish
