#!/usr/bin/env bash
# emergence (003 "Scaling laws and emergent abilities") in quick mode: six GPT sizes on 6-digit
# addition, parameters counted from the models, exact match and the per-token metrics of each,
# p^L computed from the per-token accuracy, and five comparison rows (all `not judged`).
#   tests/cli/experiments_emergence.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed emergence "003"
expect 2 "--d_models needs at least 3 widths" run emergence --d_models 8,16 --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused emergence wrote $tmp/bad" || pass "no folder for bad"
expect 2 "--nhead 4 does not divide --d_models entry 6" run emergence --nhead 4 --out "$tmp/bad2"
expect 2 "--digits" run emergence --digits 12 --out "$tmp/bad3"
expect 2 "warmup" run emergence --steps 50 --out "$tmp/bad4"
check emergence '
import math
L = res["answer_length"]
assert L == 7, L                                       # 6-digit operands, 7-digit sums
n = res["parameters"]
assert len(n) == 6 and all(a < b for a, b in zip(n, n[1:])), n
for k in ("exact_match", "token_accuracy", "predicted_exact_match"):
    assert len(res[k]) == 6 and all(0 <= x <= 1 for x in res[k]), (k, res[k])
assert all(x < 0 for x in res["token_log_likelihood"]), res["token_log_likelihood"]
# one seed in quick mode: the prediction is exactly p^L of the per-token accuracy
for p, q in zip(res["token_accuracy"], res["predicted_exact_match"]):
    assert abs(p ** L - q) < 1e-9, (p, q)
# a whole answer is never more often right than its average digit
for e, p in zip(res["exact_match"], res["token_accuracy"]):
    assert e <= p + 1e-12, (e, p)
a = res["abruptness_log_likelihood"]
assert a is None or 1 / 5 - 1e-9 <= a <= 1, a          # 1/(n-1) .. 1
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert len(rows) == 5, rows
'
finish
