#!/usr/bin/env bash
# mqa-gqa (004 §3.2) in quick mode: MHA, GQA and MQA at equal width.
# The KV cache read off the model's tensors is exactly 2 x layers x n_kv_heads x D x 4 bytes per
# token for every variant, so the ratios MHA / GQA and MHA / MQA are exactly nhead / n_kv_heads;
# the bytes held after the prompts are prompts x prompt length x that; the narrower key/value
# projections remove exactly 2 x layers x (d - n_kv_heads D)(d + 1) parameters. Cached and
# recomputed greedy decoding give the same tokens and logits equal to float32 round-off. Every
# variant learns (held-out loss far below ln |vocab|) and GQA/MQA land within a generous band of
# MHA. Timings are only checked to exist: no assertion depends on the CPU's speed. Bad settings
# exit 2 and leave no run folder.
#   tests/cli/experiments_mqa.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed mqa-gqa "004 §3.2"

expect 2 "--gqa_kv_heads 3 must divide --nhead 8" run mqa-gqa --gqa_kv_heads 3 --out "$tmp/bad1"
expect 2 "strictly between 1 (MQA) and --nhead 8" run mqa-gqa --gqa_kv_heads 8 --out "$tmp/bad2"
expect 2 "--prefixes needs at least two increasing" run mqa-gqa --prefixes 64,16 --out "$tmp/bad3"
expect 2 "--prompt_len 64 must be below --block_len 64" run mqa-gqa --prompt_len 64 \
  --out "$tmp/bad4"
expect 2 "--warmup 100 must be below --steps 50" run mqa-gqa --steps 50 --warmup 100 \
  --out "$tmp/bad5"
expect 2 "rotary positions need an even head width" run mqa-gqa --d_model 24 --out "$tmp/bad6"
expect 2 "fewer than one window of --block_len 500" run mqa-gqa --sentences 50 --block_len 500 \
  --out "$tmp/bad7"
for d in bad1 bad2 bad3 bad4 bad5 bad6 bad7; do
  [[ -e "$tmp/$d" ]] && fail "a refused mqa-gqa wrote $tmp/$d" || pass "no folder for $d"
done

check mqa-gqa '
import math
L, D, H = res["layers"], res["head_dim"], res["nhead"]
d = H * D
kv = {k: res[k + "_kv_heads"] for k in ("mha", "gqa", "mqa")}
assert kv["mha"] == H and kv["mqa"] == 1 and 1 < kv["gqa"] < H and H % kv["gqa"] == 0, kv
for k, h in kv.items():
    closed = 2 * L * h * D * 4
    assert res[k + "_cache_bytes_closed_form"] == closed, (k, res[k + "_cache_bytes_closed_form"])
    assert res[k + "_cache_bytes_per_token"] == closed, (k, res[k + "_cache_bytes_per_token"])
    assert res[k + "_cache_bytes_held"] == res["prompts"] * res["prompt_len"] * closed, k
    assert res[k + "_cache_shapes_ok"] is True, k
    # narrower k and v projections (weights and biases) are the only difference
    assert res["mha_parameters"] - res[k + "_parameters"] == 2 * L * (d - h * D) * (d + 1), k
    # cached and recomputed decoding agree
    assert res[k + "_decode_tokens_compared"] > 0, k
    assert res[k + "_decode_tokens_differ"] == 0, (k, res[k + "_decode_tokens_differ"])
    assert res[k + "_max_logit_diff"] <= 1e-4 * (1 + res[k + "_max_abs_logit"]), \
        (k, res[k + "_max_logit_diff"])
    # learning (uniform guessing over ~30 characters costs ln 30 = 3.4 nats)
    assert res[k + "_heldout_loss"] < 2.6, (k, res[k + "_heldout_loss"])
    assert res[k + "_heldout_accuracy"] > 0.3, (k, res[k + "_heldout_accuracy"])
    # timings exist (their values are the CPU'"'"'s business)
    for t in ("_cached_ms", "_recompute_ms"):
        assert len(res[k + t]) == len(res["prefixes"]) and min(res[k + t]) > 0, (k, t)
assert res["gqa_cache_ratio"] == H / kv["gqa"] and res["mqa_cache_ratio"] == H, res
for k in ("gqa", "mqa"):
    assert abs(res[k + "_heldout_loss"] - res["mha_heldout_loss"]) < 0.4, k
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
for name, s in st.items():
    if "time" not in name and "faster" not in name and "loss" not in name:
        assert s == "ok", (name, st)
assert len(r["figures"]) == 3, r["figures"]
'

# attnlab train --n_kv_heads: the GPT's key/value projections shrink to n_kv_heads x head_dim
# rows, the query projection keeps d_model; the encoder-decoder and additive scores refuse it.
expect 2 "--n_kv_heads 3 must divide --nhead 4" train charlm --model gpt --nhead 4 \
  --n_kv_heads 3 --out "$tmp/kvbad1"
expect 2 "the encoder-decoder's decoder has no grouped-query attention" train reversal \
  --model transformer --n_kv_heads 2 --out "$tmp/kvbad2"
expect 2 "--n_kv_heads 2 needs --score dot" train charlm --model gpt --n_kv_heads 2 \
  --score additive --out "$tmp/kvbad3"
if "$bin" train charlm --model gpt --d_model 32 --nhead 4 --n_kv_heads 1 --steps 20 --warmup 5 \
  --eval_every 0 --eval_size 8 --out "$tmp/kv1" >"$tmp/kv1.log" 2>&1 &&
  /usr/bin/python3 - "$tmp/kv1/checkpoint.safetensors" <<'PY'
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
shapes = {k: v["shape"] for k, v in header.items() if k.endswith("_proj.weight")}
for layer in (0, 1):
    p = f"model.layers.{layer}.self_attn."
    assert shapes[p + "q_proj.weight"] == [32, 32], shapes
    assert shapes[p + "k_proj.weight"] == [8, 32] and shapes[p + "v_proj.weight"] == [8, 32], shapes
PY
then pass "train --n_kv_heads 1: k/v projections (8,32), q (32,32)"
else fail "train --n_kv_heads 1: $(tail -3 "$tmp/kv1.log")"; fi
grep -qF "4 heads (1 key/value)" "$tmp/kv1.log" && pass "the model line names the key/value heads" ||
  fail "no '(1 key/value)' in: $(head -2 "$tmp/kv1.log")"

finish
