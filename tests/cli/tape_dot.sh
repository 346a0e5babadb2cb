#!/usr/bin/env bash
# --tape-dot FILE on `attnlab run` and `attnlab train`: the dot file is written, Graphviz parses
# it, it holds one box per tape record with the right inputs marked, the picture reaches the
# report, and bad paths are refused before anything runs (exit 2).
#   tests/cli/tape_dot.sh BUILD_DIR
source "$(dirname "$0")/lib/checks.sh" "$@"
if ! command -v dot >/dev/null; then
  echo "tests/cli/tape_dot.sh: FAIL: Graphviz's dot is not installed (scripts/setup --test installs it)"
  exit 1
fi

# worked-example: the whole tape is known, so the graph can be checked record by record.
we="$tmp/we"
if "$bin" run worked-example --threads 2 --out "$we" --tape-dot "$tmp/we.dot" >"$tmp/we.log" 2>&1; then
  pass "run worked-example --tape-dot exits 0"
else
  fail "run worked-example --tape-dot exited non-zero:"; tail -20 "$tmp/we.log"
fi
if dot -Tsvg "$tmp/we.dot" -o "$tmp/we_check.svg" 2>"$tmp/dot.err"; then
  pass "dot -Tsvg parses the worked-example graph"
else
  fail "dot -Tsvg rejects $tmp/we.dot: $(cat "$tmp/dot.err")"
fi
if /usr/bin/python3 - "$tmp" <<'PYEOF'
import json, re, sys, xml.etree.ElementTree as ET
tmp = sys.argv[1]
dot = open(tmp + "/we.dot").read()
log = open(tmp + "/we.log").read()
# The first tape the run printed (the forward; --tape-dot keeps the first graph):
#   tape: 6 records
#     #0    matmul   (3,2)[X] (2,2) -> (3,2) ...
m = re.search(r"^tape: (\d+) records\n", log, re.M)
assert m, "the run printed no tape"
block = log[m.end():].splitlines()[: int(m.group(1))]
printed = [re.match(r"\s+#(\d+)\s+(\S+)", l).groups() for l in block]
boxes = re.findall(r'^\s*op(\d+) \[shape=box, style=rounded, label="#\d+ (\S+)\\n(\S+)"\]', dot, re.M)
assert [(int(i), n) for i, n, _ in boxes] == [(int(i), n) for i, n in printed], (boxes, printed)
assert any(s == "SoftmaxOp" for _, n, s in boxes if n == "softmax"), boxes
# X is learned (filled ellipse, solid arrows); W_V is a constant (grey, dashed arrow).
assert re.search(r'leaf\d+ \[shape=ellipse, label="X\\n\(3,2\)", style=filled', dot), dot
const = re.search(r'(leaf\d+) \[shape=ellipse, label="\(2,2\)", color=gray50', dot)
assert const, dot
assert re.search(const.group(1) + r' -> op0 \[label="\(2,2\)", style=dashed', dot), dot
assert re.search(r'leaf\d+ -> op0 \[label="\(3,2\)"\];', dot), "X's arrow is solid"
assert dot.count("doubleoctagon") >= 1
# The picture: next to the file, and in the report twice (the run's own tape, and --tape-dot).
ET.parse(tmp + "/we.svg")
r = json.load(open(tmp + "/we/results.json"))
assert "figures/tape.svg" in r["figures"] and "figures/tape-dot.svg" in r["figures"], r["figures"]
html = open(tmp + "/we/report.html").read()
assert html.count("SoftmaxOp") >= 2, "the report shows the graph"
PYEOF
then pass "worked-example graph: one box per record, X solid, W_V dashed, picture in the report"
else fail "worked-example graph (see above)"; fi

# train: the first step's graph (the trainer clears the tape after every backward).
if "$bin" train reversal --model lstm --steps 2 --warmup 0 --eval_every 0 --threads 2 --out "$tmp/train" \
    --tape-dot "$tmp/train.dot" >"$tmp/train.log" 2>&1; then
  pass "train --tape-dot exits 0"
else
  fail "train --tape-dot exited non-zero:"; tail -20 "$tmp/train.log"
fi
# Hundreds of records: too many to lay out (minutes), so the run says it did not draw them, and
# Graphviz's gc parses the file without a layout.
boxes=$(grep -c 'shape=box' "$tmp/train.dot" 2>/dev/null)
if [[ -s "$tmp/train.dot" ]] && gc -n "$tmp/train.dot" >"$tmp/gc.out" 2>"$tmp/dot.err" &&
    grep -q "LstmCellOp\|lstm" "$tmp/train.dot" && grep -q "tape graph ($boxes records)" "$tmp/train.log" &&
    { [[ $boxes -le 120 ]] || grep -q "not drawn" "$tmp/train.log"; }; then
  pass "Graphviz parses the training step's graph ($boxes records, $(awk '{print $1}' "$tmp/gc.out") nodes)"
else
  fail "train graph missing, rejected or mislabelled: $(cat "$tmp/dot.err" 2>/dev/null) $(tail -3 "$tmp/train.log")"
fi

# Bad paths: refused before the run, nothing written.
expect 2 "does not exist" run worked-example --out "$tmp/bad1" --tape-dot "$tmp/no/such/dir/t.dot"
expect 2 "name it e.g. tape.dot" run worked-example --out "$tmp/bad2" --tape-dot "$tmp/t.svg"
expect 2 "does not exist" train reversal --steps 1 --warmup 0 --out "$tmp/bad3" --tape-dot "$tmp/no/t.dot"
for d in bad1 bad2 bad3; do
  [[ -e "$tmp/$d" ]] && fail "a refused --tape-dot still wrote $tmp/$d"
done
finish
