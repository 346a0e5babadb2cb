#!/usr/bin/env bash
# --plugin with the other kinds of row a student's library can register, each run beside the
# built-ins in the experiment that compares its kind (examples/coursework's plugins, built against
# an installed attnlab as in tests/cli/plugin.sh, which covers mixers and the bad libraries):
#   a positional score bias    length-extrapolation, trained beside ALiBi; `attnlab train
#                              --model gpt --positional NAME`
#   a feature map              linear-vs-softmax-recall, read beside softmax and elu + 1
#   a feed-forward block       `attnlab train --model gpt --ffn_block`, and ffn-memory
# In each, the built-ins' numbers must not move when the plugin is loaded, and bad rows of the
# kind (a name a built-in has, a value or shape the kind forbids, a throw) are refused with exit
# 2, the file named and nothing written.
#   tests/cli/plugin_kinds.sh BUILD_DIR
#   tests/cli/plugin_kinds.sh BUILD_DIR --from-source    (scripts/sanitize: build/fuzz)
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"
source "$(dirname "$0")/lib/plugin_setup.sh" "$@"

# ---- a positional scheme as a plugin -------------------------------------------------------
# examples/coursework's log-distance score bias: listed with its values checked, trained in
# length-extrapolation beside ALiBi (whose numbers must not move: every variant gets the same
# seed and batches), and two bad score biases refused.
coursework_plugin log_distance log_distance_plugin.cpp
bias_plugin="$cw/build/liblog_distance.so"
plugin_listed "$bias_plugin" "^  log-distance +$bias_plugin +finite \(checked\)" \
  "the score bias and its checked values"
small=(--quick --threads 1 --steps 30 --eval_lengths 32,64)
if "$bin" run length-extrapolation "${small[@]}" --variants log-distance,alibi --plugin "$bias_plugin" \
    --out "$tmp/le_plugin" >"$tmp/le_plugin.log" 2>&1 &&
    "$bin" run length-extrapolation "${small[@]}" --variants alibi --out "$tmp/le_alone" \
      >"$tmp/le_alone.log" 2>&1; then
  if "$py" - "$tmp/le_plugin" "$tmp/le_alone" <<'PYEOF'
import json, sys
with_plugin = json.load(open(sys.argv[1] + "/results.json"))["results"]
alone = json.load(open(sys.argv[2] + "/results.json"))["results"]
acc = with_plugin["in_distribution_log-distance"]
assert 0 < acc <= 1, acc
for key in ("in_distribution_alibi", "worst_drop_alibi"):
    assert with_plugin[key] == alone[key], (key, with_plugin[key], alone[key])
PYEOF
  then pass "length-extrapolation trains the plugin's scheme beside ALiBi, whose numbers do not move"
  else fail "length-extrapolation's results with the score bias plugin are wrong (above)"; fi
else
  fail "length-extrapolation --plugin failed:"; tail -n 20 "$tmp/le_plugin.log" "$tmp/le_alone.log"
fi
expect 2 "unknown 'log-distance' (choose from none learned" \
  run length-extrapolation --quick --variants log-distance --out "$tmp/le_refused"
# attnlab train: the score bias as a GPT's positional scheme (its only positional information).
if "$bin" train charlm --model gpt --positional log-distance --plugin "$bias_plugin" --d_model 32 \
    --nhead 2 --num_layers 1 --steps 20 --warmup 5 --eval_every 10 --progress lines \
    --out "$tmp/bias_train" >"$tmp/bias_train.log" 2>&1 &&
    grep -qF "log-distance positions" "$tmp/bias_train.log"; then
  pass "attnlab train --model gpt --positional log-distance trains with the plugin's score bias"
else
  fail "attnlab train --positional log-distance:"; tail -n 10 "$tmp/bias_train.log"
fi
expect 2 "--positional log-distance is a plugin's score bias: it needs --model gpt" \
  train copy --model transformer --positional log-distance --plugin "$bias_plugin" --steps 5 \
  --warmup 0 --out "$tmp/bias_refused"
bias_row() { echo "registry.add_score_bias({.name = \"$1\", .source = \"t\", .idea = \"t\", .bias = $2});"; }
bad inf_bias "$version" "ATTN_PLUGIN(n) { $(bias_row inverse-distance '[](int64_t, int64_t, int64_t i, int64_t j) { return 1.0 / double(i - j); }') }"
bad rope_bias "$version" "ATTN_PLUGIN(r) { $(bias_row RoPE '[](int64_t, int64_t, int64_t, int64_t) { return 0.0; }') }"
refused 2 "--plugin $tmp/inf_bias.so threw while its table was computed: score bias 'inverse-distance': b(head 0, query 0, key 0) = inf is not finite" \
  "$tmp/inf_bias.so"
refused 2 "--plugin $tmp/rope_bias.so: score bias name 'RoPE' is taken (the built-in positional scheme 'rope')" \
  "$tmp/rope_bias.so"

# ---- a linear-attention feature map as a plugin ------------------------------------------------
# examples/coursework's random-features map: listed with its features checked, read by
# linear-vs-softmax-recall beside the built-in readouts (whose numbers must not move: every method
# reads the same stored pairs), and a map with negative features and one with a reserved name
# refused.
coursework_plugin random_features random_features_plugin.cpp
map_plugin="$cw/build/librandom_features.so"
plugin_listed "$map_plugin" "^  random-features +$map_plugin +finite, >= 0 \\(checked\\)" \
  "the feature map and its checked features"
if "$bin" run linear-vs-softmax-recall --quick --plugin "$map_plugin" --out "$tmp/lsr_plugin" \
    >"$tmp/lsr_plugin.log" 2>&1 &&
    "$bin" run linear-vs-softmax-recall --quick --out "$tmp/lsr_alone" >"$tmp/lsr_alone.log" 2>&1; then
  if "$py" - "$tmp/lsr_plugin" "$tmp/lsr_alone" <<'PYEOF'
import json, sys
with_plugin = json.load(open(sys.argv[1] + "/results.json"))["results"]
alone = json.load(open(sys.argv[2] + "/results.json"))["results"]
recall = with_plugin["recall_plugin_random-features"]
assert len(recall) == len(alone["n"]) and all(0 <= r <= 1 for r in recall), recall
assert "half_recall_n_plugin_random-features" in with_plugin
for key, value in alone.items():
    if key != "methods":
        assert with_plugin[key] == value, (key, with_plugin[key], value)
assert with_plugin["methods"] == alone["methods"] + ["random-features"], with_plugin["methods"]
print("recall at n = %s: softmax %s, random-features %s" % (alone["n"][-1], alone["recall_softmax"][-1], recall[-1]))
PYEOF
  then pass "linear-vs-softmax-recall reads the plugin's map beside its own, whose numbers do not move"
  else fail "linear-vs-softmax-recall's results with the feature map plugin are wrong (above)"; fi
else
  fail "linear-vs-softmax-recall --plugin failed:"; tail -n 20 "$tmp/lsr_plugin.log" "$tmp/lsr_alone.log"
fi
map_row() { echo "registry.add_feature_map({.name = \"$1\", .source = \"t\", .idea = \"t\", .phi = $2});"; }
bad signed_map "$version" "ATTN_PLUGIN(s) { $(map_row identity '[](const attn::Var& x) { return x; }') }"
bad elu_map "$version" "ATTN_PLUGIN(e) { $(map_row ELU '[](const attn::Var& x) { return attn::relu(x); }') }"
refused 2 "--plugin $tmp/signed_map.so threw while its features were computed: feature map 'identity': feature " \
  "$tmp/signed_map.so"
refused 2 "--plugin $tmp/elu_map.so: feature map name 'ELU' is taken (attnlab's own 'elu' readout)" \
  "$tmp/elu_map.so"
# ---- a feed-forward block as a plugin ------------------------------------------------------
# examples/coursework's ReGLU block: listed with its gradient check, trained as every block's
# feed-forward by `attnlab train --model gpt --ffn_block` (its parameters in the checkpoint), run
# by ffn-memory beside the built-in block (whose results do not move), and a block taking a
# built-in activation's name refused.
coursework_plugin reglu reglu_plugin.cpp
ff_plugin="$cw/build/libreglu.so"
plugin_listed "$ff_plugin" "^  reglu +$ff_plugin +passed \(worst [0-9.]+ of the tolerance\)" \
  "the feed-forward block and its passed gradient check"
if "$bin" train charlm --model gpt --ffn_block reglu --plugin "$ff_plugin" --d_model 32 --nhead 2 \
    --num_layers 1 --dim_ff 48 --steps 30 --warmup 5 --eval_every 15 --progress lines --threads 2 \
    --out "$tmp/ff_train" >"$tmp/ff_train.log" 2>&1; then
  grep -qF "feed-forward reglu" "$tmp/ff_train.log" &&
    pass "attnlab train --model gpt --ffn_block reglu trains the plugin's block" ||
    fail "attnlab train did not describe the plugin's block: $(head -5 "$tmp/ff_train.log")"
  if "$py" - "$tmp/ff_train" <<'PYEOF'
import json, struct, sys
d = sys.argv[1]
r = json.load(open(d + "/results.json"))
assert "feed-forward reglu" in r["model_description"], r["model_description"]
with open(d + "/checkpoint.safetensors", "rb") as f:
    names = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
for w in ("w1", "w2", "w3"):
    assert any(n.endswith("layers.0.feed_forward.%s.weight" % w) for n in names), sorted(names)
assert not any("linear1" in n for n in names), sorted(names)
print(r["model_description"])
PYEOF
  then pass "the block's parameters are the model's (in the checkpoint, no linear1/linear2)"
  else fail "the trained model's checkpoint lacks the block's parameters (above)"; fi
else
  fail "attnlab train --ffn_block reglu failed:"; tail -n 20 "$tmp/ff_train.log"
fi
expect 2 "--ffn_block: unknown 'reglu' (no block is loaded" \
  train charlm --model gpt --ffn_block reglu --steps 5 --warmup 0 --out "$tmp/ff_refused1"
expect 2 "--ffn_block reglu needs --model gpt" \
  train copy --model transformer --ffn_block reglu --plugin "$ff_plugin" --steps 5 --warmup 0 \
  --out "$tmp/ff_refused2"
for with in no yes; do
  plugins=()
  [[ $with == yes ]] && plugins=(--plugin "$ff_plugin")
  "$bin" run ffn-memory --quick --threads 2 "${plugins[@]}" --out "$tmp/ffn-$with" \
    >"$tmp/ffn-$with.log" 2>&1 ||
    { fail "ffn-memory --quick (plugin: $with) failed:"; tail -n 20 "$tmp/ffn-$with.log"; }
done
if [[ -s "$tmp/ffn-yes/results.json" && -s "$tmp/ffn-no/results.json" ]] &&
    "$bin" list --json >"$tmp/list.json" &&
    "$py" - "$tmp/ffn-no" "$tmp/ffn-yes" "$root/tests/cli/lib" "$tmp/list.json" <<'PYEOF'
import json, sys
base, with_plugin, lib, listing = sys.argv[1:5]
sys.path.insert(0, lib)
from same_results import differences
entry = next(e for e in json.load(open(listing)) if e["name"] == "ffn-memory")
a = json.load(open(base + "/results.json"))
b = json.load(open(with_plugin + "/results.json"))
res = b["results"]
widths = res["fact_widths"]
mine, builtin = res["fact_recall_mean_reglu"], res["fact_recall_mean"]
assert len(mine) == len(widths) and len(res["fact_recall_sd_reglu"]) == len(widths)
assert all(0 <= x <= 1 for x in mine), mine
report = open(with_plugin + "/report.html").read()
assert "reglu (mean over seeds)" in report and "keys-and-values parts" in report
b["results"] = {k: v for k, v in res.items() if not k.endswith("_reglu")}
lines = differences(a, b, vary=entry["nondeterministic"]["keys"])
assert not lines, "\n".join(lines)
print("recall by width %s: built-in %s, reglu %s" % (widths, ["%.3f" % x for x in builtin],
                                                       ["%.3f" % x for x in mine]))
PYEOF
then pass "ffn-memory --quick runs reglu beside the built-in block, whose results are unchanged"
else fail "ffn-memory's results with the feed-forward plugin are wrong (above)"; fi
ff_row() { echo "registry.add_feed_forward({.name = \"$1\", .source = \"t\", .idea = \"t\", .make = $2});"; }
gelu_make='[](int64_t d, int64_t d_ff, attn::Generator& g) { return std::make_shared<Gelu>(d, d_ff, g); }'
gelu_block='#include <attnlab/nn/feedforward.h>
struct Gelu final : attn::nn::FeedForwardBlock {
  Gelu(int64_t d, int64_t d_ff, attn::Generator& g) : FeedForwardBlock("Gelu"),
      ff(std::make_shared<attn::nn::FeedForward>(d, d_ff, attn::nn::Activation::kGELU, g)) {}
  attn::Var forward(const attn::Var& x) const override { return ff->forward(x); }
  std::shared_ptr<attn::nn::FeedForward> ff;
};'
bad gelu_taken "$version" "$gelu_block
ATTN_PLUGIN(g) { $(ff_row GELU "$gelu_make") }"
bad ff_throws "$version" "$gelu_block
ATTN_PLUGIN(g) { $(ff_row moe '[](int64_t, int64_t, attn::Generator&) -> std::shared_ptr<attn::nn::FeedForwardBlock> { throw std::invalid_argument("2 experts need an even d_ff"); }') }"
refused 2 "--plugin $tmp/gelu_taken.so: feed-forward name 'GELU' is taken (the built-in activation 'gelu')" \
  "$tmp/gelu_taken.so"
refused 2 "--plugin $tmp/ff_throws.so: feed-forward 'moe' threw while being built or run: 2 experts need an even d_ff" \
  "$tmp/ff_throws.so"

finish
