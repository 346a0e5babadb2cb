#!/usr/bin/env bash
# bag-of-tokens in quick mode: the majority bit is learned in 50 steps, the first bit is not.
#   tests/cli/experiments_bag.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed bag-of-tokens
expect 2 "--length 8 is even" run bag-of-tokens --length 8 --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused bag-of-tokens wrote $tmp/bad" || pass "no folder for bad"
check bag-of-tokens '
assert res["accuracy_majority"] >= 0.9, res
assert abs(res["accuracy_first"] - 0.5) <= 3 * 0.5 / 200 ** 0.5, res
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert rows["first bit: held-out accuracy (chance)"]["outcome"] == "ok", rows
'
finish
