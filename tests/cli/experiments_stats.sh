#!/usr/bin/env bash
# The counting and statistics experiments of issue 21 end to end, in quick mode:
#   parameter-share   counts by component equal PyTorch's formulas (recomputed here), QKV is a
#                     quarter of a standard block, the "over half" claim is flagged DIFFERS
# and bad settings exit 2 before any work.
#   tests/cli/experiments_stats.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

for name in parameter-share; do
  "$bin" list | grep -q "^  $name " || fail "attnlab list does not show $name"
done

# ---- parameter-share ----
expect 2 "--nhead 5 must divide --d_model 512" run parameter-share --nhead 5 --out "$tmp/ps-bad1"
expect 2 "--kv_heads 3 must divide --nhead 8" run parameter-share --kv_heads 3 --out "$tmp/ps-bad2"
check parameter-share '
d, ff = 512, 2048
enc = res["encoder_layer"]
# nn.TransformerEncoderLayer: in_proj (3d, d) + (3d), out_proj (d, d) + (d), two linears, two norms
assert [enc[c] for c in ("Q", "K", "V", "O")] == [d * d + d] * 4, enc
assert enc["FFN"] == 2 * d * ff + ff + d and enc["norms"] == 4 * d, enc
assert abs(enc["qkv_share"] - 0.25) < 1e-3, enc
gqa = res["llama_block_gqa"]  # 2 of 8 kv heads: K and V are a quarter of Q
assert gqa["K"] == gqa["V"] == gqa["Q"] // 4 and gqa["qkv_share"] < enc["qkv_share"], gqa
assert res["all_match_formula"] is True
for key in ("encoder_layer", "decoder_layer", "llama_block_mha", "llama_block_gqa", "base_model",
            "reversal_model"):
    assert res[key]["constructed"] and res[key]["matches_formula"], key
st = {e["name"].split(": ")[1]: e["status"] for e in cmp[0]["entries"] if "over half" in e["name"]}
assert st and all(s == "DIFFERS" for s in st.values()), st
'

finish
