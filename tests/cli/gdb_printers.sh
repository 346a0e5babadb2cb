#!/usr/bin/env bash
# gdb on the Debug build (build/debug/attnlab, made by `scripts/gdb --build`): a breakpoint in an
# op's backward during a run stops with Tape::run_backward as frame #1, showing its source line
# as this checkout has it (the objects name /ATTNLAB_SOURCE, tools/gdb maps it); the
# pretty-printers, xmethods and attn-tape show dy, the record and the tape without calling into the program
# (may-call-functions off), agree with what the program reports, and give the same answers on
# a core file; the Debug build's auto-load file loads them; a Tensor read before its constructor
# ran (or filled with garbage) prints as <invalid Tensor: ...>, never as a Python exception;
# docs/autodiff.md's transcript is what gdb prints now.
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
# 4. A Tensor read before its constructor ran: at the top of the op's backward its local dx is
#    still stack garbage. `info locals` prints it without a Python exception; then dx is filled
#    with known garbage, field by field (the constructor, not reached, would overwrite all of
#    it; the process is killed instead): a rank past 4, a negative rank, pointers that are no
#    vector's, an unreadable Storage and an element count that disagrees with the shape. Then
#    the op's record is poisoned the same way and prints as <invalid record: ...>.
impl=dx.shape_._M_impl
huge_rank=93824994626212  # (finish - start) / 8 when start and finish are unrelated words
set_shape() {  # start finish end_of_storage
  printf -- '-ex\nset var %s._M_start = (long *) %s\n' "$impl" "$1"
  printf -- '-ex\nset var %s._M_finish = (long *) %s\n' "$impl" "$2"
  printf -- '-ex\nset var %s._M_end_of_storage = (long *) %s\n' "$impl" "$3"
}
mapfile -t garbage < <(
  section locals "info locals"
  set_shape 0x1000 $((0x1000 + 8 * huge_rank)) $((0x1000 + 8 * huge_rank)); section huge "p dx"
  set_shape 0x2000 0x1000 0x2000; section negative "p dx"
  set_shape 0xa5a5a5a5a5a5a5a5 0xa5a5a5a5a5a5a5a5 0xa5a5a5a5a5a5a5a5; section pointers "p dx"
  printf -- '-ex\nset var dx.shape_ = y.shape_\n-ex\nset var dx.numel_ = y.numel_\n'
  printf -- '-ex\nset var dx.storage_._M_ptr = (attn::Storage *) 0x10\n'; section storage "p dx"
  printf -- '-ex\nset var dx.storage_._M_ptr = y.storage_._M_ptr\n-ex\nset var dx.numel_ = 5\n'
  section numel "p dx"; section xstr "p dx.str()"; section xdata "p dx.data()"
  section after "info locals"
  # The record itself, poisoned and restored: an inputs vector ending before it starts, then a
  # bool holding neither 0 nor 1 (attn-tape marks that one record and prints the others).
  printf -- '-ex\nset $finish = this->inputs._M_impl._M_finish\n'
  printf -- '-ex\nset var this->inputs._M_impl._M_finish = this->inputs._M_impl._M_start - 1\n'
  section recinputs "p *this"; section tapeinputs "attn-tape"
  printf -- '-ex\nset var this->inputs._M_impl._M_finish = $finish\n'; section restored "p *this"
  printf -- '-ex\nset var *(unsigned char *) &this->output.node_._M_ptr->has_grad = 0x5a\n'
  section recbool "p *this"; section varbool "p this->output"; section end "kill")
"${gdb_base[@]}" -ex "break $op::backward" \
  -ex "run ${program[*]} --threads 1 --out $tmp/run2 >$tmp/run2.log 2>&1" "${garbage[@]}" \
  "$debug" >"$tmp/garbage.txt" 2>&1

/usr/bin/python3 - "$tmp" "$op" "$root" <<'PYEOF'
import json, math, os, re, sys
tmp, op, root = sys.argv[1], sys.argv[2], sys.argv[3]
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
# The stop shows the source line, read from this checkout: the Debug objects name the checkout
# /ATTNLAB_SOURCE (shared through ccache between clones) and tools/gdb maps it back to this one.
m = re.search(r"Breakpoint 1, attn::%s::backward .* at (\S+):(\d+)\n(\d+)\t(.*)" % op, text)
here = ""
if m:
    path = os.path.join(root, re.sub(r"^(\.\./)+", "", m.group(1)))
    if os.path.isfile(path):
        here = open(path).read().splitlines()[int(m.group(2)) - 1]
check(m is not None and here != "" and m.group(4) == here,
      "the breakpoint shows its source line from this checkout (%s)" % root,
      (m.group(0) if m else text[-1500:]) + "\nthe checkout's line: %r" % here)
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

check("<invalid" not in text, "a valid stop: no <invalid ...> anywhere in the live session",
      "\n".join(l for l in text.splitlines() if "<invalid" in l))
check("inputs[0] = " in this and "inputs[1]" not in this,
      "p *this shows the op's one input, no more (a vector of Vars read with their own size)",
      this)
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
check("<invalid" not in ctext, "core file: no <invalid ...> anywhere", ctext[-2000:])
gtext, garbage = sections(tmp + "/garbage.txt")
check("Python Exception" not in gtext and "Traceback" not in gtext,
      "a Tensor read before its constructor: no Python exception anywhere", gtext[-3000:])
check(re.search(r"^dx = ", garbage.get("locals", ""), re.M) is not None,
      "info locals at the top of %s::backward prints dx (still unconstructed)" % op,
      garbage.get("locals", ""))
expected = {
    "huge": r"<invalid Tensor: shape rank 93824994626212>",
    "negative": r"<invalid Tensor: shape rank -512>",
    "pointers": r"<invalid Tensor: shape vector with start 0xa5a5a5a5a5a5a5a5,",
    "storage": r"<invalid Tensor: Cannot access memory at address 0x1[0-9a-f]?>",
    "numel": r"<invalid Tensor: numel 5, shape \(3,3\)>",
    "xstr": r"= \"<invalid Tensor: numel 5, shape \(3,3\)>\"",
    "xdata": r"= \"<invalid Tensor: numel 5, shape \(3,3\)>\"",
    "after": r"^dx = <invalid Tensor: numel 5, shape \(3,3\)>",
    "recinputs": r"^\$\d+ = <invalid record: inputs -1>$",
    "tapeinputs": r"^  #\d+ +<invalid record: inputs -1>$",
    "restored": r"^\$\d+ = %s \(3,3\)\* -> \(3,3\)  \(has grad\) = \{" % op,
    "recbool": r"^\$\d+ = <invalid record: bool holding 90>$",
    "varbool": r"^\$\d+ = <invalid Var: bool holding 90>$",
}
for name, pattern in expected.items():
    check(re.search(pattern, garbage.get(name, ""), re.M) is not None,
          "garbage (%s) prints as %s" % (name, pattern.replace("\\", "")), garbage.get(name, ""))
# An invalid object shows no children (nothing read from it), and one bad record leaves the
# tape's other lines as they were.
for name in ("recinputs", "recbool", "varbool"):
    check("inputs[0]" not in garbage.get(name, "") and "value =" not in garbage.get(name, ""),
          "the invalid object (%s) prints no members" % name, garbage.get(name, ""))
bad_tape = garbage.get("tapeinputs", "").splitlines()
check(len(bad_tape) == len(tape) and sum("<invalid" in l for l in bad_tape) == 1 and all(
      a == b for a, b in zip(bad_tape, tape) if "<invalid" not in a),
      "attn-tape with one poisoned record: that line invalid, every other line as before",
      "\n".join(bad_tape))
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
