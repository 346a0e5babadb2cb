#!/usr/bin/env bash
# Positions everywhere, end to end through the attnlab executable:
#  - `attnlab train --positional none|learned|sinusoidal|rope|alibi|t5_bias` with each transformer
#    model (transformer, gpt, bert) runs a few steps, and config.json and the checkpoint's stored
#    configuration name the scheme that ran (auto resolves to the model's own: sinusoidal for the
#    encoder-decoder, learned for gpt and bert);
#  - --resume with auto continues with the checkpoint's scheme, a different one is refused (2);
#  - a bad name lists the choices (2); a recurrent model refuses a positional scheme (2).
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
expect 2 "unknown positional 'rotary' (choose from: auto, none, learned, sinusoidal, rope, alibi, t5_bias)" \
  train reversal --positional rotary
expect 2 "--positional rope is for the transformer models" train reversal --model lstm --positional rope
expect 2 "d_model/nhead (12/4) must be even" train reversal --positional rope --d_model 12 --nhead 4
expect 2 "'rotary' is not a choice. Valid names: none, learned, sinusoidal" run reversal --positional rotary

finish
