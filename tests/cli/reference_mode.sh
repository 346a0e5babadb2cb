#!/usr/bin/env bash
# The two paths end to end (autograd/mode.h): `--reference` runs put only elementary ops on the
# printed tape, `--fast` runs the fused ones, config.json and the report say which path ran, the
# teaching experiments default to the reference path, and worked-example / cat-sat-mat print
# every gradient by hand beside the tape's, agreeing.
#   tests/cli/reference_mode.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"
unset ATTN_REFERENCE  # the experiments' own defaults, whatever the caller's environment says

fused='fused_attention|attention_probs|attention_weights|tril_matmul|masked_softmax|linear_relu|gelu_linear|linear '

# run_path NAME FLAG...: runs `attnlab run NAME --quick FLAG...` into a new folder
# $tmp/NAME<flags>.XXXX (attnlab refuses to run into a folder that holds an earlier run), prints it.
run_path() {
  local name=$1; shift
  local dir
  dir=$(mktemp -d "$tmp/$name$(printf '%s' "$@" | tr -d ' -').XXXX")  # new and empty: accepted
  if ! "$bin" run "$name" --quick --threads 2 --out "$dir" "$@" >"$dir.log" 2>&1; then
    fail "attnlab run $name $* exited non-zero:"; tail -20 "$dir.log"
  fi
  echo "$dir"
}

# tape_ops LOG: the op names of every printed tape record ("  #3    softmax   (..." lines).
tape_ops() { grep -E '^\s+#[0-9]+ ' "$1" | awk '{print $2}' | sort -u | tr '\n' ' '; }

# path_is DIR PATH: config.json and the report record the path.
path_is() {
  "$py" - "$1" "$2" <<'PYEOF' || fail "$1: the run does not record path $2"
import json, sys
d, want = sys.argv[1], sys.argv[2]
cfg = json.load(open(d + "/config.json"))
assert cfg["path"] == want, cfg
assert "path: " + want in open(d + "/report.html").read()
PYEOF
}

for name in causal-mask worked-example; do
  dir=$(run_path "$name")  # the default of a teaching experiment: the reference path
  ops=$(tape_ops "$dir.log")
  if grep -Eq "(^| )($fused)" <<<"$ops "; then fail "$name (default) has fused ops on its tape: $ops"
  elif ! grep -q "softmax" <<<"$ops"; then fail "$name (default) printed no softmax record: $ops"
  else pass "$name default: only elementary ops on the tape: $ops"; fi
  path_is "$dir" reference
done

dir=$(run_path causal-mask --reference)
ops=$(tape_ops "$dir.log")
if grep -Eq "(^| )($fused)" <<<"$ops "; then fail "causal-mask --reference: fused ops on the tape: $ops"
elif ! grep -q "masked_fill" <<<"$ops" || ! grep -q "mul_scalar" <<<"$ops"; then
  fail "causal-mask --reference: no masked_fill / mul_scalar on the tape: $ops"
else pass "causal-mask --reference: matmul, mul_scalar, masked_fill, softmax: $ops"; fi
path_is "$dir" reference

dir=$(run_path causal-mask --fast)
ops=$(tape_ops "$dir.log")
if grep -q "attention_weights" <<<"$ops"; then pass "causal-mask --fast: the fused ops: $ops"
else fail "causal-mask --fast: expected attention_weights on the tape: $ops"; fi
path_is "$dir" fast

# Hand gradients beside the tape's.
for name in worked-example cat-sat-mat; do
  dir=$(run_path "$name")
  "$py" - "$dir" <<'PYEOF' && pass "$name: every gradient by hand agrees with the tape" || fail "$name: hand gradients"
import json, sys
res = json.load(open(sys.argv[1] + "/results.json"))["results"]
assert res["hand_gradients_agree"] is True, res["hand_vs_tape_max_diff"]
assert res["hand_vs_tape_max_diff"] < 1e-5, res["hand_vs_tape_max_diff"]
for t in ("out", "A", "scores", "Q", "K", "V", "X"):
    assert res["grad_max_diff_" + t] < 1e-5, t
    assert res["dL/d%s (tape)" % t] and res["dL/d%s (by hand)" % t], t
PYEOF
  grep -q "dS = A o (dA - rowsum(dA o A))" "$dir/report.html" || fail "$name: the report lacks the formulas"
done

# Bad usage: exit 2.
expect 2 "contradict" run worked-example --reference --fast
expect 2 "takes no value" run worked-example --reference=yes
expect 0 "--reference" run worked-example --help
finish
