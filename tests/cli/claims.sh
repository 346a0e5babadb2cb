#!/usr/bin/env bash
# The claims ledger and `attnlab run --all`, end to end:
#   - three fast experiments run with their defaults; `attnlab claims` lists exactly their rows
#     (table summary, claims.json and claims.html counted against their results.json files), and
#     a newer run with a changed --seed is passed over;
#   - a truncated, a wrong-typed and a huge results.json: exit status 1, the file named, no
#     crash, and no older run used in place of the damaged one;
#   - bad words: exit status 2 with the problem named;
#   - `attnlab run --all --quick` on three experiments (--only: the whole catalogue in --quick
#     takes longer than a test should), one of them made to fail: the others still run, exit 1,
#     the ledger's rows all not judged, index.html links every report;
#   - claims.html in headless Chromium: the rendered page has one row per claim (skipped, loudly,
#     without chromium).
#   tests/cli/claims.sh BUILD_DIR
source "$(dirname "$0")/lib/checks.sh" "$@"
bin=$(realpath "$bin")
experiments=(worked-example cat-sat-mat identity-lookup)

# count_rows RUNS NAME...: the comparison rows (total ok DIFFERS "not judged") of the latest run
# of each NAME under RUNS, read from its results.json.
count_rows() {
  "$py" - "$@" <<'PYEOF'
import json, os, sys
runs, names = sys.argv[1], sys.argv[2:]
counts = {"total": 0, "ok": 0, "DIFFERS": 0, "not judged": 0}
for n in names:
    latest = sorted(os.listdir(os.path.join(runs, n)))[-1]
    r = json.load(open(os.path.join(runs, n, latest, "results.json")))
    for c in r["comparisons"]:
        for e in c["entries"]:
            counts["total"] += 1
            counts[e["status"]] += 1
print(counts["total"], counts["ok"], counts["DIFFERS"], counts["not judged"])
PYEOF
}

# ledger_counts FILE: the same four counts from claims.json.
ledger_counts() {
  "$py" -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = [c["status"] for c in j["claims"]]
print(len(s), s.count("ok"), s.count("DIFFERS"), s.count("not judged"))' "$1"
}

cd "$tmp" || exit 1
declare -A default_run  # NAME -> its default-setting run folder (the later --seed run may sort first)
for n in "${experiments[@]}"; do
  "$bin" run "$n" --threads 2 >"$tmp/$n.log" 2>&1 || fail "attnlab run $n exited non-zero"
  default_run[$n]=$(ls -d runs/"$n"/*/ | head -1)
done
want=$(count_rows runs "${experiments[@]}")
out=$("$bin" claims 2>&1); rc=$?
[[ $rc -eq 0 ]] && pass "attnlab claims -> exit 0" || fail "attnlab claims exited $rc: $out"
got=$(ledger_counts runs/claims.json)
[[ "$got" == "$want" ]] && pass "claims.json rows (total ok DIFFERS not-judged) = results.json: $got" ||
  fail "claims.json counts '$got', results.json '$want'"
total=${want%% *}
grep -qE "^$total claims from 3 of [0-9]+ experiments" <<<"$out" &&
  pass "the table's summary counts $total claims from 3 experiments" || fail "summary line: $out"
grep -qE "^  [a-z-]+ +no run" <<<"$out" && pass "experiments without a run are listed" ||
  fail "no 'no run' line in the table"

# A newer run with a changed seed is not a default-setting run.
"$bin" run identity-lookup --seed 5 >/dev/null 2>&1
"$bin" claims >/dev/null 2>&1
got=$(ledger_counts runs/claims.json)
[[ "$got" == "$want" ]] && pass "a newer --seed run is passed over" || fail "--seed run used: $got"

# claims.html in a real browser: one rendered row per claim.
if command -v chromium >/dev/null 2>&1; then
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --dump-dom "file://$tmp/runs/claims.html" \
    >"$tmp/dom.html" 2>"$tmp/chromium.log"
  rows=$(grep -o '<tr class="claim' "$tmp/dom.html" | wc -l)
  links=$(grep -o 'href="[a-z-]*/[0-9-]*/report.html"' "$tmp/dom.html" | sort -u | wc -l)
  [[ $rows -eq $total && $links -eq 3 ]] &&
    pass "claims.html renders in Chromium: $rows claim rows, links to the 3 reports" ||
    fail "claims.html in Chromium: $rows rows (want $total), $links report links (want 3)"
else
  echo "SKIP claims.html in Chromium: chromium is not installed -- NOT TESTED"
fi

# Damaged files: the newest default-setting run of each is planted, older good runs stay.
plant() {  # plant NAME: a copy of NAME's default-setting run folder, dated later, printed
  local src=${default_run[$1]} dst
  dst="runs/$1/29991231-235959"
  cp -r "$src" "$dst" && echo "$dst"
}
d=$(plant worked-example) && head -c 300 "$d/results.json" >"$d/r" && mv "$d/r" "$d/results.json"
expect 1 "$d/results.json: not valid JSON (truncated, or not written by attnlab)" claims
expect 1 "older runs are not used in its place" claims
d=$(plant cat-sat-mat) && echo '{"experiment": "cat-sat-mat", "source": "x", "status": "ok",
  "comparisons": [{"title": 5, "entries": []}]}' >"$d/results.json"
expect 1 "$d/results.json: comparisons[0]: \"title\" is not a text" claims
d=$(plant identity-lookup) && truncate -s 200M "$d/results.json"
expect 1 "$d/results.json: is 200 MB, over the 64 MB limit" claims
"$bin" claims >/dev/null 2>&1
got=$(ledger_counts runs/claims.json)
[[ "$got" == "0 0 0 0" ]] && pass "no older run replaces a damaged one (0 rows)" ||
  fail "rows from older runs were used: $got"

# Bad words.
expect 2 "unknown option --bogus" claims --bogus
expect 2 "no runs folder '/nonexistent/runs'" claims --runs /nonexistent/runs
expect 2 "give either an experiment name or --all, not both" run --all anagrams
expect 2 "unknown option --iters" run --all --iters 3
expect 2 "Did you mean anagrams?" run --all --only anagram

# run --all --quick on three experiments, the second one unable to make its run folder.
mkdir -p all && touch all/cat-sat-mat
only=$(IFS=,; echo "${experiments[*]}")
"$bin" run --all --quick --only "$only" --runs all --threads 2 >"$tmp/all.log" 2>&1; rc=$?
[[ $rc -eq 1 ]] && pass "run --all with a failing experiment -> exit 1" || fail "run --all exited $rc"
grep -q "FAILED: cat-sat-mat" "$tmp/all.log" && grep -q "^\[3/3\] identity-lookup" "$tmp/all.log" &&
  pass "run --all names the failure and goes on to experiment 3 of 3" ||
  fail "run --all output: $(tail -5 "$tmp/all.log")"
grep -qE "^\[1/3\] worked-example .*elapsed 0:00 +ETA [0-9]+:[0-9]{2}" "$tmp/all.log" &&
  pass "progress line: experiment i of N with an ETA" || fail "no progress line"
want=$(count_rows all worked-example identity-lookup)
got=$(ledger_counts all/claims.json)
[[ "$got" == "$want" && "${want##* }" == "${want%% *}" ]] &&
  pass "run --all --quick: the ledger's $got rows are the runs', all not judged" ||
  fail "run --all ledger '$got', results.json '$want'"
links=$(grep -o 'href="[a-z-]*/[0-9-]*/report.html"' all/index.html | sed 's/href="//;s/"$//')
n=0; for l in $links; do [[ -s "all/$l" ]] && n=$((n + 1)); done
[[ $n -eq 2 ]] && pass "index.html links the 2 reports written" || fail "index.html: $n good links"
grep -q "claims.html" all/index.html && pass "index.html links the ledger" || fail "no ledger link"
finish
