#!/usr/bin/env bash
# winograd-shortcut (000 §X) in quick mode: trained only on sentences where "it" names the first
# noun, the model learns that in 60 steps and answers the first noun on every shifted sentence,
# its last layer's row from "it" resting on N1 in both test sets.
#   tests/cli/experiments_winograd.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed winograd-shortcut "000 §X"
expect 2 "--nhead 3 must divide --d_model 32" run winograd-shortcut --nhead 3 --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused winograd-shortcut wrote $tmp/bad" || pass "no folder for bad"
expect 2 "seeds" run winograd-shortcut --seeds 0 --out "$tmp/bad2"
check winograd-shortcut '
assert min(res["shortcut_accuracy_it_first"]) >= 0.9, res
assert max(res["shortcut_accuracy_it_second"]) <= 0.1, res
assert min(res["shortcut_names_first_on_second"]) >= 0.9, res
for k in ("it_first", "it_second"):
    row = res["shortcut_it_row_last_layer_" + k]
    assert len(row) == 9 and abs(sum(row) - 1) < 1e-4, row
    assert row[1] > 0.5 and row[4] < 0.1, (k, row)   # on N1 (position 1), not N2 (position 4)
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert len(rows) == 3, rows
for e in rows.values():
    assert e["outcome"] == "ok", e
'
finish
