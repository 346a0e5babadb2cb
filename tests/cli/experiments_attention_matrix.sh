#!/usr/bin/env bash
# attention-matrix (001 direct connections, 002 §39.5) in quick mode: every row of 001's table
# sums to 100 and its "cat" bars are its "cat" row; the untrained and trained word matrices of
# the sentence are distributions, the trained GPT's causal (nothing above the diagonal).
#   tests/cli/experiments_attention_matrix.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed attention-matrix "001 \(direct connections\), 002 §39.5"
expect 2 "--steps 10 must exceed --warmup 50" run attention-matrix --steps 10 --out "$tmp/bad"
[[ -e "$tmp/bad" ]] && fail "a refused attention-matrix wrote $tmp/bad" || pass "no folder for bad"
check attention-matrix '
rows = {e["name"]: e for e in cmp[0]["entries"]}
assert len(rows) == 7, rows
for i, w in enumerate(["The", "cat", "sat", "on", "the", "mat"]):
    e = rows["row %d (%s): sum of the percentages" % (i, w)]
    assert e["outcome"] == "ok" and e["ours"] == 100, e
assert rows["the bars from \"cat\" are the table'"'"'s \"cat\" row"]["outcome"] == "ok", rows
mats = [res["untrained layer, words"]] + [res["trained layer %d (heads averaged), words" % l]
                                          for l in (1, 2)]
for m in mats:
    assert len(m) == 6 and all(abs(sum(r) - 1) < 1e-5 for r in m), m
for m in mats[1:]:
    assert all(m[i][j] == 0 for i in range(6) for j in range(i + 1, 6)), m   # causal
assert res["perplexity"] < res["unigram_perplexity"], res
for k in ("untrained_the_on_the", "trained_best_the_on_the", "trained_the_uniform"):
    assert 0 < res[k] < 1, (k, res[k])
'
finish
