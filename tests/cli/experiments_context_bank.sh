#!/usr/bin/env bash
# context-bank (000, one word in two contexts) in quick mode: "bank" is looked up as the same
# vector in every sentence (distance 0, a probe on it at chance), while after 150 steps the
# output at "bank" carries the sentence's sense (a probe reads it; the two senses' mean outputs
# lie farther apart than a sentence from its own sense's mean). A one-step run is not trained,
# and the rows that need a trained model say `not judged`.
#   tests/cli/experiments_context_bank.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed context-bank "000 \\(dynamic topology\\), 004 §1.3"
expect 2 "--eval_size 202 is not a multiple of 4" run context-bank --eval_size 202 --out "$tmp/bad1"
expect 2 "--nhead 3 must divide --d_model 32" run context-bank --nhead 3 --out "$tmp/bad2"
for refused in "$tmp/bad1" "$tmp/bad2"; do  # a refused run writes no folder
  [[ -e $refused ]] && fail "a refused context-bank wrote $refused" || pass "no folder $refused"
done
check context-bank '
n = len(res["sense_accuracy"])
assert n == 2, res
assert res["static_distance"] == [0.0] * n, res     # one vector, whatever the sentence
assert res["probe_static"] == [0.5] * n, res        # one vector cannot tell the senses apart
assert min(res["sense_accuracy"]) >= 0.9, res
assert min(res["probe_output"]) >= 0.9, res
assert max(res["probe_output_untrained"]) < min(res["probe_output"]), res
for between, within in zip(res["cos_between"], res["cos_within"]):
    assert between > 3 * within, (between, within)
for k in ("river", "money"):
    assert len(res["last_layer_per_word_" + k + "_sentences"]) == 4, res
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert len(rows) == 5, rows
'
# One step: the readout has not learned the sense, so the rows about the trained output and
# row say why they are not judged (the static embedding rows need no training).
if "$bin" run context-bank --steps 1 --seeds 1 --eval_size 200 --threads 2 --out "$tmp/untrained" \
    >"$tmp/untrained.log" 2>&1 &&
  "$py" - "$tmp/untrained/results.json" <<'PYEOF'
import json, sys
entries = json.load(open(sys.argv[1]))["comparisons"][0]["entries"]
untrained = [e for e in entries if e["status"] == "not judged"]
assert len(untrained) == 3, entries
assert all("model did not train" in e["not_judged"] for e in untrained), untrained
assert all(e["status"] == "ok" for e in entries if e not in untrained), entries
PYEOF
then
  pass "context-bank after one step: the three rows that need training are not judged"
else
  fail "context-bank after one step:"; tail -5 "$tmp/untrained.log"
fi
finish
