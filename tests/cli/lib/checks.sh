# Shared by the tests/cli/experiments*.sh scripts (sourced, never run alone): the attnlab binary,
# a temporary folder removed on exit, and the helpers
#   expect CODE PATTERN ARGS...  attnlab ARGS exits with CODE and prints PATTERN
#   check NAME PYTHON            `attnlab run NAME --quick` succeeds, writes its run folder,
#                                every comparison row is `not judged`, and PYTHON (with r, res,
#                                cmp bound to results.json) passes; a row's "outcome" is how it
#                                came out (ok / DIFFERS), its "status" what the run can judge
#   listed NAME [SOURCE]         `attnlab list` shows NAME (with SOURCE, a regex, as its source)
#   finish                       prints PASS/FAIL for the script and exits accordingly
# Usage at the top of a script:  source "$(dirname "$0")/lib/checks.sh" "$@"
bin="${1:?usage: SCRIPT BUILD_DIR}/attnlab"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ATTN_THREADS=${ATTN_THREADS:-2}
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# listed NAME [SOURCE]: the listing is captured first, not piped: `attnlab list | grep -q` lets
# grep quit at its first match and kill the writer with SIGPIPE, which pipefail reports.
listed() {
  local listing
  listing=$("$bin" list) || { fail "attnlab list failed"; return; }
  if grep -qE "^  $1 +${2:-}" <<<"$listing"; then pass "attnlab list shows $1${2:+ ($2)}"
  else fail "attnlab list does not show $1${2:+ with source $2}"; fi
}

# expect CODE PATTERN ARGS...: attnlab ARGS exits with CODE and prints PATTERN (stdout or stderr).
expect() {
  local code=$1 pattern=$2; shift 2
  local out rc
  out=$("$bin" "$@" 2>&1); rc=$?
  if [[ $rc -ne $code ]]; then fail "attnlab $* exited $rc, expected $code: $out"; return; fi
  if ! grep -qF -- "$pattern" <<<"$out"; then fail "attnlab $* did not print '$pattern': $out"; return; fi
  pass "attnlab $* -> exit $code, '$pattern'"
}


# check NAME PYTHON: runs `attnlab run NAME --quick`, then PYTHON on results.json as r. Under
# scripts/test, tests/cli/experiments_registry.sh has already run that command for every
# experiment into $ATTN_QUICK_RUNS/NAME (and proved it gives the same numbers on every run): that
# folder is checked where it is (results.json records paths inside it) instead of running the
# command again, and copied, with its log, to $tmp/NAME and NAME.log for the script's own checks.
check() {
  local name=$1 code=$2 dir="$tmp/$1" log="$tmp/$1.log" whose=""
  if [[ -n "${ATTN_QUICK_RUNS:-}" && -s "$ATTN_QUICK_RUNS/$name/results.json" ]] &&
    cp -a "$ATTN_QUICK_RUNS/$name" "$dir" && cp "$ATTN_QUICK_RUNS/$name.log" "$log"; then
    dir="$ATTN_QUICK_RUNS/$name" whose=", the registry test's run"
  elif ! "$bin" run "$name" --quick --threads 2 --out "$dir" >"$log" 2>&1; then
    fail "$name exited non-zero:"; tail -20 "$log"; return
  fi
  for f in config.json results.json report.html; do
    [[ -s "$dir/$f" ]] || { fail "$name wrote no $f"; return; }
  done
  if ! "$py" - "$dir" <<PYEOF
import json, sys, glob, xml.etree.ElementTree as ET
d = sys.argv[1]
r = json.load(open(d + "/results.json"))
cfg = json.load(open(d + "/config.json"))
assert r["status"] == "ok", r
assert cfg["quick"] is True and cfg["threads"] == 2, cfg
for svg in glob.glob(d + "/figures/*.svg"):
    ET.parse(svg)  # well-formed XML
html = open(d + "/report.html").read()
assert html.count("<svg") == len(r["figures"]), "every figure inline in the report"
assert "<script" not in html
res = r["results"]
cmp = r["comparisons"]
# A --quick run judges no claim: every row is "not judged", and "outcome" says how it came out.
for c in cmp:
    for e in c["entries"]:
        assert e["status"] == "not judged" and e["not_judged"].startswith("--quick run"), e
$code
PYEOF
  then fail "$name: key results (see above)"; return; fi
  pass "$name quick: key results ok ($(grep -o 'done in [0-9.]* s' "$log")$whose)"
}


finish() {
  if [[ $failures -ne 0 ]]; then
    echo "tests/cli/$(basename "$0"): FAIL ($failures)"
    exit 1
  fi
  echo "tests/cli/$(basename "$0"): PASS"
}
