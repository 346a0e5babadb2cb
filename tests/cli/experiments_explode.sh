#!/usr/bin/env bash
# The trainer's safety inside experiments: a learning rate forced to 1e9 blows a training up,
# and the experiment stops with exit 1 and a message naming the experiment, the variant and the
# step; the run folder says "failed" and holds nothing a finished run would (no sub-run results,
# no checkpoint, no "done"). With --detect-anomaly the message names the op that produced the
# first NaN/Inf, with the variant and the step. The four ways experiments train are covered:
# bag-of-tokens (kit::fit_settings + train::fit), attention-matrix (train_for_experiment, the
# train command's loop), reversal-no-positions (train::fit, where the NaN appears) and demo (a
# loop written out by hand, with train::DivergenceCheck).
#   tests/cli/experiments_explode.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

# exploded NAME PATTERN ARGS...: `attnlab run NAME --quick --lr 1e9 ARGS` exits 1 with
# "attnlab run NAME: failed: " and the extended regex PATTERN on stderr, "done in" nowhere, and
# results.json's status "failed" with the same error.
exploded() {
  local name=$1 pattern=$2 dir="$tmp/$1${3:-}"; shift 2
  local lr_flags=${LR_FLAGS:---lr 1e9}  # an experiment with a learning-rate list: --lrs 1e9
  # shellcheck disable=SC2086
  "$bin" run "$name" --quick --threads 2 $lr_flags --out "$dir" "$@" >"$dir.out" 2>"$dir.err"
  local rc=$?
  if [[ $rc -ne 1 ]]; then fail "$name $lr_flags $* exited $rc, expected 1"; tail -5 "$dir.err"; return; fi
  if ! grep -qE -- "^attnlab run $name: failed: .*$pattern" "$dir.err"; then
    fail "$name $lr_flags $*: stderr lacks /$pattern/:"; cut -c1-400 "$dir.err"; return
  fi
  if grep -q "done in" "$dir.out" "$dir.err"; then fail "$name $lr_flags $* says 'done in'"; return; fi
  if ! "$py" - "$dir" "$pattern" <<'PYEOF'
import json, os, re, sys
d, pattern = sys.argv[1], sys.argv[2]
r = json.load(open(d + "/results.json"))
assert r["status"] == "failed", r["status"]
assert re.search(pattern, r["error"]), r["error"]
assert "FAILED" in open(d + "/report.html").read()
# No sub-run claims to have finished: results.json and checkpoints come only at a training's end.
for root, _, files in os.walk(d):
    if root == d:
        continue
    for f in files:
        assert f != "results.json" and not f.endswith(".safetensors"), os.path.join(root, f)
PYEOF
  then fail "$name $lr_flags $*: the run folder (see above)"; return; fi
  pass "$name $lr_flags $* -> exit 1, /$pattern/, run folder marked failed"
}

# train::fit (kit::fit_settings): the loss's moving average explodes at step 2.
exploded bag-of-tokens "variant 'majority': training diverged at step [0-9]+"
[[ -s "$tmp/bag-of-tokens/training/majority.csv" ]] && pass "bag-of-tokens kept its loss log" ||
  fail "bag-of-tokens: no training/majority.csv (the loss up to the explosion)"
# The train command's loop (train_for_experiment): the variant is its sub-run, "train".
exploded attention-matrix "variant 'train': training diverged at step [0-9]+"
[[ -s "$tmp/attention-matrix/train/metrics.csv" ]] && pass "attention-matrix kept its loss log" ||
  fail "attention-matrix: no train/metrics.csv"
# Anomaly detection on, but the loss explodes while staying finite: no op to name, and it says so
# instead of advising to turn detection on.
exploded attention-matrix \
  "variant 'train': training diverged at step [0-9]+.*anomaly detection was on: no op produced" \
  --detect-anomaly
# Anomaly detection where a NaN appears: the op, the step (or the evaluation after it), the variant.
exploded reversal-no-positions \
  "variant 'none': (step|the evaluation after step) [0-9]+: [a-z_]+: non-finite .*\(anomaly detection" \
  --detect-anomaly
# Without detection the same run stops on its NaN loss, naming variant and step.
exploded reversal-no-positions "variant 'none': training diverged: the loss is -?nan at step [0-9]+"
# The hand-written loop: before DivergenceCheck its loss reached 1e9 and the run said "done".
exploded demo "variant 'mlp': training diverged at step [0-9]+"
# A learning rate past float's range (1e39 is inf as a float) makes the first update
# non-finite, so the next forward's first op is where anomaly detection stops the run: it names
# the variant and the step, as the kit's loop does (it used to give the op alone).
exploded demo "variant 'mlp': step [0-9]+: [a-z_]+: non-finite .*\(anomaly detection" \
  --lr 1e39 --detect-anomaly
# A scratch training inside a sweep (train_in_scratch) names the task and the variant
# (reversal_no_layer_norm: the intact block only diverges, which ablate-block counts), not the
# experiment.
exploded ablate-block "variant 'reversal_[a-z_]+': step [0-9]+: [a-z_]+: non-finite .*\(anomaly" \
  --detect-anomaly
# pre-post-norm's sweep trains each arm the same way: the error names depth, norm, warm-up, lr and
# seed (it named the experiment).
LR_FLAGS="--lrs 1e9" exploded pre-post-norm \
  "variant 'depth [0-9]+, (pre|post)-norm, (no )?warm-up, lr 1e\+09, seed [0-9]+': step [0-9]+: [a-z_]+: non-finite .*\(anomaly" \
  --detect-anomaly

# counted NAME PATTERN ARGS...: where divergence is what the experiment measures (pre-post-norm's
# failures over a learning-rate sweep, ablate-block's diverged runs per variant), a diverged run
# is a result: exit 0, counted, and the output says so (extended regex PATTERN).
counted() {
  local name=$1 pattern=$2 dir="$tmp/counted-$1"; shift 2
  if ! "$bin" run "$name" --quick --threads 2 --out "$dir" "$@" >"$dir.out" 2>&1; then
    fail "$name $* exited non-zero:"; tail -5 "$dir.out"; return
  fi
  grep -qE -- "$pattern" "$dir.out" || { fail "$name $*: output lacks /$pattern/"; return; }
  pass "$name $* -> exit 0, diverged runs counted: /$pattern/"
}
counted ablate-block "the intact block diverged on reversal \(1 of 1 runs\)" --lr 1e9
counted pre-post-norm "100% of post-norm runs and 100% of pre-norm runs failed" --lrs 1e9
finish
