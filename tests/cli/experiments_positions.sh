#!/usr/bin/env bash
# Positions everywhere, end to end through the attnlab executable:
#  - `attnlab train --positional none|learned|sinusoidal|rope|alibi|t5_bias` with each transformer
#    model (transformer, gpt, bert) runs a few steps, and config.json and the checkpoint's stored
#    configuration name the scheme that ran (auto resolves to the model's own: sinusoidal for the
#    encoder-decoder, learned for gpt and bert);
#  - --resume with auto continues with the checkpoint's scheme, a different one is refused (2);
#  - a bad name lists the choices (2); a recurrent model refuses a positional scheme (2);
#  - sinusoid-shift: the fitted shift map leaves a residual near float32 rounding, equals the
#    analytic rotation, and a random table cannot be fitted; the dot product of two encodings
#    depends on the distance alone;
#  - rope-relative: RoPE scores depend on i - j alone (both pairings), added positions do not.
#   tests/cli/experiments_positions.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

# stored_positional RUN_DIR EXPECTED: config.json and the checkpoint's metadata agree on it.
stored_positional() {
  "$py" - "$1" "$2" <<'PYEOF'
import json, struct, sys
d, want = sys.argv[1], sys.argv[2]
cfg = json.load(open(d + "/config.json"))
assert cfg["positional"] == want, ("config.json", cfg["positional"], want)
with open(d + "/checkpoint.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    meta = json.loads(f.read(n))["__metadata__"]
stored = json.loads(meta["extra.config"])
assert stored["positional"] == want, ("checkpoint", stored["positional"], want)
PYEOF
}

tiny=(--d_model 16 --nhead 2 --num_layers 1 --dim_ff 32 --steps 3 --warmup 1 --batch_size 4
      --eval_size 4 --eval_every 0 --progress off --max_len 6 --eval_min_len 3 --eval_max_len 6)
# task per model: reversal for the generators, charlm (masked LM) for bert; anagram runs the
# transformer as an encoder classifier.
for spec in "reversal transformer sinusoidal" "reversal gpt learned" "charlm bert learned" \
            "anagram transformer learned"; do
  read -r task model default <<<"$spec"
  for p in auto none learned sinusoidal rope alibi t5_bias; do
    dir="$tmp/train-$task-$model-$p"
    extra=()
    [[ $task == charlm ]] && extra=(--block_len 12)
    [[ $task == anagram ]] && extra=(--max_len 8 --eval_min_len 4 --eval_max_len 8)
    if ! "$bin" train "$task" --model "$model" --positional "$p" "${tiny[@]}" "${extra[@]}" \
        --out "$dir" >"$dir.log" 2>&1; then
      fail "train $task --model $model --positional $p exited non-zero:"; tail -5 "$dir.log"
      continue
    fi
    want=$p
    [[ $p == auto ]] && want=$default
    if stored_positional "$dir" "$want"; then
      pass "train $task --model $model --positional $p: ran, stored '$want'"
    else
      fail "train $task --model $model --positional $p: stored scheme is not '$want'"
    fi
  done
done

# Resume: auto continues with the stored scheme; another scheme is refused before any work.
run="$tmp/resume"
"$bin" train reversal --model gpt --positional t5_bias "${tiny[@]}" --schedule warmup \
  --out "$run" >/dev/null 2>&1 || fail "train for the resume test"
expect 0 "t5_bias positions" train reversal --model gpt "${tiny[@]}" --schedule warmup --steps 5 \
  --resume "$run/checkpoint.safetensors"
stored_positional "$run" t5_bias && pass "resumed run kept t5_bias" || fail "resumed run lost t5_bias"
expect 2 "--positional is t5_bias in the checkpoint but alibi now" train reversal --model gpt \
  "${tiny[@]}" --schedule warmup --steps 7 --positional alibi --resume "$run/checkpoint.safetensors"

# Bad input.
expect 2 "--positional: 'rotary' is not a choice. Valid names: auto, none, learned, sinusoidal, rope, alibi, t5_bias" \
  train reversal --positional rotary
expect 2 "--positional rope is for the transformer models" train reversal --model lstm --positional rope
expect 2 "d_model/nhead (12/4) must be even" train reversal --positional rope --d_model 12 --nhead 4
expect 2 "'rotary' is not a choice. Valid names: none, learned, sinusoidal" run reversal --positional rotary

# recurrent-baselines takes the transformer's scheme as transformer:POSITIONAL.
expect 2 "transformer:POSITIONAL with POSITIONAL one of none, learned" run recurrent-baselines \
  --models transformer:rotary --out "$tmp/rb-bad"
rb="$tmp/rb"
if "$bin" run recurrent-baselines --quick --threads 2 --models transformer,transformer:t5_bias \
    --out "$rb" >"$rb.log" 2>&1 && "$py" - "$rb" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1] + "/results.json"))["results"]
assert r["models"] == ["transformer", "transformer_t5_bias"], r["models"]
assert r["per_model"]["transformer"]["positional"] == "sinusoidal", r["per_model"]["transformer"]
assert r["per_model"]["transformer_t5_bias"]["positional"] == "t5_bias"
cfg = json.load(open(sys.argv[1] + "/models/transformer_t5_bias/config.json"))
assert cfg["positional"] == "t5_bias", cfg["positional"]
PYEOF
then pass "recurrent-baselines --models transformer,transformer:t5_bias"
else fail "recurrent-baselines with transformer:t5_bias"; tail -5 "$rb.log"; fi

# ---- the two experiments ----
check sinusoid-shift '
import math
eps = 1.1920929e-07  # float32: the table is stored in it
assert res["table_vs_formula_max"] < 10 * eps, res["table_vs_formula_max"]
assert res["fit_residual_max"] < 100 * eps, res["fit_residual_max"]
assert res["analytic_residual_max"] < 100 * eps, res
assert res["fit_vs_analytic_max"] < 1e-4 and res["halves_max_diff"] < 1e-4, res
assert res["control_residual_min"] > 0.5, res  # a random table has no such map
# no form assumed: any d x d map fits as well, and the fast columns come out block-diagonal
assert res["full_fit_residual_max"] < 100 * eps, res
assert res["full_fit_fast_offblock_max"] < 1e-4, res
assert res["full_fit_fast_vs_analytic_max"] < 1e-4, res
assert len(res["fit_residual"]) == len(res["shifts"]) == 2, res
assert res["dot_relative_deviation"] < 100 * eps, res
assert res["dot_vs_analytic_max"] < 1e-4 * cfg["config"]["d_model"], res
assert res["min_distinct_distance"] > 0.1, res
assert all(e["outcome"] == "ok" for e in cmp[0]["entries"]), cmp
'
check rope-relative '
eps = 1.1920929e-07
for k in ("rope_rotate_half", "rope_interleaved"):
    assert res["diagonal_spread_" + k] < 100 * eps, (k, res)
    assert res["shift_change_" + k] < 100 * eps, (k, res)
for k in ("sinusoidal_added", "learned_added"):
    assert res["diagonal_spread_" + k] > 0.05, (k, res)
    assert res["shift_change_" + k] > 0.05, (k, res)
assert res["rope_relative_only"] is True
assert all(e["outcome"] == "ok" for e in cmp[0]["entries"]), cmp
'
expect 2 "--d_model must be even" run sinusoid-shift --d_model 7 --out "$tmp/odd"
expect 2 "--positions (8) must be at least --d_model (16)" run sinusoid-shift --d_model 16 \
  --positions 8 --out "$tmp/few"
expect 2 "--head_dim must be even" run rope-relative --head_dim 7 --out "$tmp/odd2"

finish
