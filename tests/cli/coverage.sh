#!/usr/bin/env bash
# docs/coverage.md — every runnable item of the five course documents, the experiment that runs
# it and the comparison row that checks it — against `attnlab list` and the experiments' sources
# (tests/cli/lib/coverage_map.py does the work; nothing is run but `attnlab list`):
#   - each document 000-004 has its table (columns section | item | status | experiment |
#     comparison row | note); status is covered, partly, missing or out of scope;
#   - covered and partly name an experiment of `attnlab list`; covered names a comparison row,
#     partly may (and says in its note what is not compared); missing and out of scope name no
#     row and give the plan or the reason; a missing item's experiment is "—" or
#     "NAME (planned)", NAME an experiment of the Planned table not in `attnlab list` yet (once
#     listed, the test asks for its items to be mapped) or a listed one that is to grow;
#   - every experiment of `attnlab list` maps a covered or partly item under each document its
#     source names (a source naming none must say "(none)", as demo's does);
#   - the counts section equals the counts of the tables (`tests/cli/lib/coverage_map.py
#     counts` rewrites it).
#
# The rule for "the experiment writes this comparison row" (a grep would miss the rows whose
# names are built at run time, and a loose pattern would accept a misspelt one):
#   - the experiment's sources are the .cpp file holding `e.name = "NAME";` and, transitively,
#     every header under experiments/ it includes, the .cpp beside that header and its parts
#     (HEADER_part.cpp, where the size limit split one header's code), except the
#     shared machinery (experiments/kit/, report/, cli/, plugin/ and experiments/*.h);
#   - a row is the first argument of cmp.add(...), cmp.add_exact(...) or cmp.add_rows(...) (the
#     DocumentComparison variables are named cmp, prose or diag), read as a template:
#       "text" "more"             the text (adjacent literals joined, escapes decoded)
#       fmt::format("a {} b", x)  the text; each {...} placeholder matches any text
#       A + B                     A's template, then B's
#       c ? A : B                 A's template or B's
#       any other operand         (a variable, a call) a whole string literal of the sources
#                                 (its own {...} matching any text) or a number
#       add_rows("A", ...)        A[r,:] for a row number r, as the table prints it;
#   - the row cell of coverage.md (the name as a default run prints it, in backticks, a "|"
#     written "\|") must match one template from its first character to its last; so must every
#     name a covered or partly item's note quotes in backticks (other than ok, DIFFERS,
#     not judged and --flags).
# The script then breaks copies of the page and of the listing on purpose and expects each
# break to be caught: an item mapped twice, an experiment dropped from the tables, a misnamed row
# (in the row cell and in a note), a row given to another experiment, an unlisted experiment, a
# stale count, a covered item without a row, an experiment gone from the listing, a planned
# experiment that exists.
#   tests/cli/coverage.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"
root=$(cd "$(dirname "$0")/../.." && pwd)
map="$root/tests/cli/lib/coverage_map.py"
doc="$root/docs/coverage.md"

"$bin" list >"$tmp/listing" || { fail "attnlab list failed"; finish; }
if out=$("$py" "$map" check "$tmp/listing" 2>&1); then
  pass "docs/coverage.md matches attnlab list and the experiments' rows: ${out##*$'\n'}"
else
  fail "docs/coverage.md:"; echo "$out"
fi

# caught LABEL PATTERN SED-SCRIPT [LISTING]: a copy of the page edited by SED-SCRIPT fails the
# check with PATTERN in its output (the edit must change the copy, or the case proves nothing).
caught() {
  local label=$1 pattern=$2 script=$3 listing=${4:-$tmp/listing} copy="$tmp/mutant.md" out
  sed -e "$script" "$doc" >"$copy"
  if [[ $listing == "$tmp/listing" ]] && cmp -s "$doc" "$copy"; then
    fail "mutation '$label' did not change the page"; return
  fi
  if out=$("$py" "$map" check "$listing" "$copy" 2>&1); then
    fail "mutation '$label' passed the check"
  elif grep -qF -- "$pattern" <<<"$out"; then
    pass "mutation '$label' caught: $(grep -F -- "$pattern" <<<"$out" | head -1)"
  else
    fail "mutation '$label' failed without '$pattern': $out"
  fi
}
caught "memory-wall dropped from the tables" "memory-wall (002 §39.3.2) is in \`attnlab list\` but maps no item of 002" \
  '/| `memory-wall` |/d'
caught "a misnamed row" "two-relation writes no comparison row '2 heads end higher than 1 head'" \
  's/`2 heads end lower than 1 head`/`2 heads end higher than 1 head`/'
caught "a row given to another experiment" "mha-heads writes no comparison row 'masked attention matrix is lower-triangular'" \
  '/Ex. 39.3/s/`causal-mask`/`mha-heads`/'
caught "an experiment attnlab does not list" "experiment 'memory-walls' is not in \`attnlab list\`" \
  '0,/`memory-wall`/s//`memory-walls`/'
caught "a count edited by hand" "the counts section is out of date" \
  's/^| all | \([0-9]*\) /| all | 1\1 /'
caught "a misnamed row in a note" "worked-example writes no comparison row 'prose scores row 3'" \
  's/`prose scores row 2`/`prose scores row 3`/'
caught "a covered item without a row" "covered, but no comparison row named" \
  's/| `0.99^100` |/| — |/'
grep -v '^  softmax-dispersion ' "$tmp/listing" >"$tmp/listing-short"
caught "a listed experiment missing from attnlab list" "experiment 'softmax-dispersion' is not in \`attnlab list\`" \
  '' "$tmp/listing-short"
caught "an item mapped twice" "is mapped twice" '/^| §5.1 | per-layer cost/p'
# Every planned experiment is built by now: the mutation plans one for a missing item and lists it.
{ cat "$tmp/listing"; echo "  kv-quant                  (none)     ~1 s   (a new experiment)"; } \
  >"$tmp/listing-built"
caught "a planned experiment that is built" "kv-quant is in \`attnlab list\` now" \
  '0,/| missing | — |/s//| missing | `kv-quant (planned)` |/
/^|---|---|---|$/a | `kv-quant` | 11 | a planned experiment |' "$tmp/listing-built"
finish
