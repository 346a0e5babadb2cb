#!/usr/bin/env bash
# gdb on the Debug build (build/debug/attnlab, made by `scripts/gdb --build`): a breakpoint in an
# op's backward during a run stops with Tape::run_backward as frame #1; the pretty-printers,
# xmethods and attn-tape show dy, the record and the tape without calling into the program
# (may-call-functions off), agree with what the program reports, and give the same answers on
# a core file; the Debug build's auto-load file loads them; docs/autodiff.md's transcript is
# what gdb prints now.
#   tests/cli/gdb_printers.sh BUILD_DIR    (BUILD_DIR is not used: the Debug build is)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
debug="$root/build/debug/attnlab"
if ! command -v gdb >/dev/null; then
  echo "tests/cli/gdb_printers.sh: NOT TESTED: gdb is not installed (scripts/setup --test installs it)"
  exit 0
fi
if [[ ! -x "$debug" ]]; then
  echo "tests/cli/gdb_printers.sh: FAIL: no Debug build at $debug (run scripts/gdb --build)"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ATTN_THREADS=1 OMP_NUM_THREADS=1
# The run and the op whose backward it stops in.
program=(run worked-example)
op=SoftmaxOp
gdb_base=(gdb -nx -batch -iex "source $root/tools/gdb/attnlab.py" -iex "set may-call-functions off"
  -iex "set print thread-events off" -iex "set width 0" -iex "set height 0" -iex "set confirm off")
section() { printf -- '-ex\necho @@%s\\n\n-ex\n%s\n' "$1" "$2"; }

# 1. A live process, stopped in the op's backward; a core file written there; then the run
#    finishes (its results.json holds the numbers the printers must agree with).
mapfile -t live < <(
  section bt "bt 3"; section dy "p dy()"; section dystr "p dy().str(4)"
  section raw "p *dy().data()@3"; section this "p *this"; section tape "attn-tape"
  section tapevar "p 'attn::tape()::t'"; section core "gcore $tmp/core"; section end "delete"; section finish "continue")
"${gdb_base[@]}" -ex "break $op::backward" \
  -ex "run ${program[*]} --threads 1 --out $tmp/run >$tmp/run.log 2>&1" "${live[@]}" \
  "$debug" >"$tmp/live.txt" 2>&1
# 2. The core file, read by a second gdb.
mapfile -t post < <(section bt "bt 2"; section dy "p dy()"; section tape "attn-tape")
"${gdb_base[@]}" "${post[@]}" "$debug" "$tmp/core" >"$tmp/core.txt" 2>&1
# 3. The auto-load file next to the Debug binary, once the folder is trusted.
gdb -nx -batch -iex "add-auto-load-safe-path $root/build/debug" -ex "info pretty-printer" \
  "$debug" >"$tmp/autoload.txt" 2>&1

/usr/bin/python3 - "$tmp" "$op" <<'PYEOF'
import json, math, re, sys
tmp, op = sys.argv[1], sys.argv[2]
failures = []
def check(ok, what, detail=""):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if detail: print(detail)
def sections(path):
    text = open(path).read()
    parts = re.split(r"^@@(\w+)$", text, flags=re.M)
    return text, {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
NUM = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|-?inf|nan"
def numbers(s):
    return [float(x) for x in re.findall(NUM, s)]

text, live = sections(tmp + "/live.txt")
check("Cannot call functions" not in text and "may-call-functions" not in text,
      "nothing called into the program (may-call-functions off)", text[-3000:])
check(re.search(r"Breakpoint 1, attn::%s::backward" % op, text) is not None,
      "break %s::backward is hit" % op, text[-3000:])
bt = live.get("bt", "").splitlines()
check(len(bt) >= 2 and "attn::%s::backward" % op in bt[0] and re.search(
      r"^#1\s.*attn::Tape::run_backward", bt[1]) is not None,
      "frame #1 is attn::Tape::run_backward", "\n".join(bt))
m = re.match(r"\$\d+ = \((\d+(?:,\d+)*)\) (\[.*)", live.get("dy", ""), re.S)
check(m is not None, "p dy() prints the shape and the values", live.get("dy", ""))
dy_shape = tuple(int(x) for x in m.group(1).split(",")) if m else ()
dy_vals = numbers(m.group(2)) if m else []
check(dy_vals and all(math.isfinite(v) for v in dy_vals), "dy's values are finite numbers")
check(numbers(live.get("dystr", "").split("=", 1)[-1]) == dy_vals,
      "p dy().str(4) shows the same values", live.get("dystr", ""))
raw = numbers(live.get("raw", "").split("=", 1)[-1])
check(len(raw) == 3 and all(abs(a - b) <= 5e-4 * max(1, abs(a)) for a, b in zip(raw, dy_vals)),
      "p *dy().data()@3 reads the same floats", live.get("raw", ""))
this = live.get("this", "")
check(re.search(r"^\$\d+ = %s " % op, this) is not None and "inputs[0]" in this
      and "output" in this, "p *this prints the record (struct, inputs, output)", this)
tape = live.get("tape", "").splitlines()
n = re.match(r"tape: (\d+) records", tape[0]) if tape else None
check(n is not None and int(n.group(1)) == len(tape) - 1 and any(op in l for l in tape),
      "attn-tape lists every record, %s among them" % op, "\n".join(tape))
check(live.get("tapevar", "").split("=", 1)[-1].strip() == "\n".join(tape).strip(),
      "p 'attn::tape()::t' (the thread_local) prints the same tape", live.get("tapevar", ""))

if op == "SoftmaxOp":  # worked-example reports A (= softmax's saved y) and dL/dA (= its dy)
    r = json.load(open(tmp + "/run/results.json"))["results"]
    flat = lambda m: [v for row in m for v in row]
    close = lambda xs, ys: len(xs) == len(ys) and all(
        abs(a - b) <= 1e-3 * max(1.0, abs(b)) for a, b in zip(xs, ys))  # printed to 4 digits
    ym = re.search(r"y = \(3,3\) (\[\[.*?\]\])", this, re.S)
    y = numbers(ym.group(1)) if ym else []
    check(close(y, flat(r["A"])), "the saved y the printer reads is the A the run reports",
          "%s vs %s" % (y, r["A"]))
    check(dy_shape == (3, 3) and close(dy_vals, flat(r["dL/dA (tape)"])),
          "p dy() is the dL/dA the run reports", "%s vs %s" % (dy_vals, r["dL/dA (tape)"]))

ctext, core = sections(tmp + "/core.txt")
cbt = core.get("bt", "").splitlines()
check(len(cbt) >= 2 and "attn::%s::backward" % op in cbt[0] and "attn::Tape::run_backward" in cbt[1],
      "core file: the same two frames", ctext[-2000:])
check(core.get("dy") == live.get("dy"), "core file: p dy() prints what the live process did",
      "%r vs %r" % (core.get("dy"), live.get("dy")))
check(core.get("tape") == live.get("tape"), "core file: attn-tape prints the same tape",
      core.get("tape", ctext[-2000:]))
check("attnlab_lookup" in open(tmp + "/autoload.txt").read(),
      "build/debug/attnlab-gdb.py is auto-loaded from a trusted build folder",
      open(tmp + "/autoload.txt").read()[-2000:])
sys.exit(1 if failures else 0)
PYEOF
rc=$?
if "$root/scripts/autodiff_transcript" --check; then
  echo "PASS docs/autodiff.md's gdb transcript is current"
else
  echo "FAIL docs/autodiff.md's gdb transcript (see above)"; rc=1
fi
if [[ $rc -ne 0 ]]; then echo "tests/cli/gdb_printers.sh: FAIL"; exit 1; fi
echo "tests/cli/gdb_printers.sh: PASS"
