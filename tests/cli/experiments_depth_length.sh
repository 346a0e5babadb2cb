#!/usr/bin/env bash
# depth-hops and length-extrapolation in quick mode.
# depth-hops (000 "Seeing ≠ Walking"): one result per (hops, layers) cell; one hop is a single
# content lookup, solved by one layer (accuracy >= 0.9; it reaches 1.0 in about 200 of the 300
# quick steps), while two hops with one layer stay far below (one lookup cannot compose two
# pointers); bad settings exit 2 and leave no run folder.
# length-extrapolation (000 §VIII, 001, 004 §4.1): every variant learns the toy grammar
# in-distribution (sinusoidal only checked for range: 150 quick steps are not enough for it);
# learned positions read past their table with their last vector repeated; the sliding window
# puts no attention beyond the trained distances and holds its accuracy at 4x the length, as
# ALiBi does; added sinusoids fall far below ALiBi at 4x.
#   tests/cli/experiments_depth_length.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed depth-hops "000 \"Seeing ≠ Walking\""
expect 2 "--nhead 5 must divide --d_model 64" run depth-hops --nhead 5 --out "$tmp/bad1"
expect 2 "--steps (20) must exceed --warmup (100)" run depth-hops --steps 20 --out "$tmp/bad2"
for d in bad1 bad2; do
  [[ -e "$tmp/$d" ]] && fail "a refused depth-hops wrote $tmp/$d" || pass "no folder for $d"
done

check depth-hops '
cells = {(c["hops"], c["layers"]): c for c in res["cells"]}
assert sorted(cells) == [(1, 1), (1, 2), (2, 1), (2, 2)], sorted(cells)
for c in cells.values():
    assert len(c["accuracy"]) == 1 and 0 <= c["mean_accuracy"] <= 1, c
    assert 1 <= c["steps"][0] <= 300, c
assert cells[(1, 1)]["mean_accuracy"] >= 0.9, cells[(1, 1)]   # one hop, one layer: solved
assert cells[(2, 1)]["mean_accuracy"] <= 0.75, cells[(2, 1)]  # two hops, one layer: not
fewest = {f["hops"]: f["fewest_layers"] for f in res["fewest_layers"]}
assert fewest[1] == 1, fewest
assert res["shallow_cells_solved"] == 0, res
assert abs(res["chance"] - 0.25) < 1e-12, res  # 5 nodes
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
assert st["1 hop: the fewest layers that solve it is k"] == "ok", st
assert st["no model with fewer layers than hops solves it (L < k fails)"] == "ok", st
assert len(r["figures"]) == 1, r["figures"]
'

listed length-extrapolation "000 §VIII, 001 \(positional encoding, ALiBi\)"
expect 2 "unknown 'alibii'" run length-extrapolation --variants rope,alibii --out "$tmp/bad3"
expect 2 "--eval_lengths must ascend from --train_len (32)" run length-extrapolation \
  --eval_lengths 64,128 --out "$tmp/bad4"
expect 2 "too few" run length-extrapolation --sentences 20 --out "$tmp/bad5"
for d in bad3 bad4 bad5; do
  [[ -e "$tmp/$d" ]] && fail "a refused length-extrapolation wrote $tmp/$d" || pass "no folder for $d"
done

check length-extrapolation '
v = {x["variant"]: x for x in res["variants"]}
assert list(v) == ["none", "learned", "sinusoidal", "rope", "alibi", "t5_bias", "window"], list(v)
acc = {}
for name, x in v.items():
    pts = x["points"]
    assert [p["length"] for p in pts] == [32, 128], pts
    acc[name] = [p["accuracy"] for p in pts]
    for p in pts:
        assert 0 <= p["accuracy"] <= 1 and p["loss"] > 0 and 0 <= p["far_mass"] <= 1 + 1e-6, p
# in distribution: far above the 1-in-30 guess for every scheme that 150 steps can train
for name in ("none", "learned", "rope", "alibi", "t5_bias", "window"):
    assert acc[name][0] >= 0.4, (name, acc[name])
# learned positions: read past their table with the last trained vector repeated (measured)
assert 0 <= v["learned"]["points"][1]["accuracy"] <= 1, v["learned"]
# the window sees no distance it was not trained on, and holds its accuracy; so does ALiBi
assert v["window"]["points"][1]["far_mass"] == 0, v["window"]
assert acc["window"][1] >= acc["window"][0] - 0.05, acc["window"]
assert acc["alibi"][1] >= acc["alibi"][0] - 0.05, acc["alibi"]
# added sinusoids at 4x the training length: far below ALiBi
assert acc["sinusoidal"][1] < acc["alibi"][1] - 0.2, acc
st = {e["name"]: e for e in cmp[0]["entries"]}
# 150 quick steps do not train the sinusoidal model: its rows say so, beside --quick
sin = [e for n, e in st.items() if n.startswith("000 §VIII: added sinusoids")][0]
assert "model did not train (final sinusoidal accuracy" in sin["not_judged"], sin
assert res["in_distribution_sinusoidal"] < res["bigram_accuracy"] + 0.05, res
assert len(r["figures"]) == 1, r["figures"]
'

finish
