#!/usr/bin/env bash
# vit-patches (003 "Vision transformers (ViT)", Check Your Understanding 3) in quick mode
# (300 steps, patch sizes 4 and 8, 300 held-out images).
# The ViT beats chance (1/7) by a wide margin; every head's mean attention distance lies
# between 0 and the largest distance on the patch grid, its [CLS] share in [0, 1], and the
# uniform reference is the exact mean pairwise distance of a 4x4 grid of 4-pixel patches; without
# position embeddings shuffling the patches leaves (all but float-rounding ties of) the
# predictions unchanged, and that model cannot beat a coin on the two dot-pair classes by much,
# while the model with positions loses accuracy on shuffled patches; the learned position
# embeddings of patches in one row or column become alike (row-column structure); a model trained
# on shapes in the left half scores lower on the right half. Timings are recorded but never
# asserted. Bad settings exit 2 and leave no run folder.
#   tests/cli/experiments_vit.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed vit-patches "003 Vision transformers \(ViT\)"

expect 2 "--patch_size 5 must divide --image_size 16" run vit-patches --patch_size 5 \
  --out "$tmp/bad1"
expect 2 "--patch_sizes 3 must divide --image_size 16" run vit-patches --patch_sizes 2,3 \
  --out "$tmp/bad2"
expect 2 "--nhead 3 must divide --d_model 32" run vit-patches --nhead 3 --out "$tmp/bad3"
expect 2 "--max_radius" run vit-patches --max_radius 7.5 --out "$tmp/bad4"
expect 2 "--warmup must be smaller than --steps" run vit-patches --steps 50 --warmup 50 \
  --out "$tmp/bad5"
for d in bad1 bad2 bad3 bad4 bad5; do
  [[ -e "$tmp/$d" ]] && fail "a refused vit-patches wrote $tmp/$d" || pass "no folder for $d"
done

check vit-patches '
import itertools, math
chance = 1 / 7
assert abs(res["chance"] - chance) < 1e-12, res["chance"]
# learning: far above chance after 300 steps
assert res["accuracy"] > chance + 0.4, res["accuracy"]
assert len(res["per_class_accuracy"]) == 7, res
# the uniform reference: mean distance between the 16 patches of a 4x4 grid, 4 pixels apart
cells = list(itertools.product(range(4), range(4)))
u = sum(4 * math.hypot(a[0] - b[0], a[1] - b[1]) for a in cells for b in cells) / 256
assert abs(res["uniform_distance"] - u) < 1e-9, (res["uniform_distance"], u)
far = 4 * math.hypot(3, 3)
layers = res["attention_distance"]
assert [l["layer"] for l in layers] == [1, 2, 3, 4], layers
for l in layers:
    assert len(l["heads"]) == 4 and len(l["cls_mass"]) == 4, l
    assert all(0 <= h <= far for h in l["heads"]), l
    assert all(0 <= c <= 1 for c in l["cls_mass"]), l
# without positions: a function of the set of patches
assert res["no_positions_shuffle_agreement"] >= 0.99, res["no_positions_shuffle_agreement"]
pc = res["no_positions_per_class_accuracy"]
assert (pc[5] + pc[6]) / 2 < 0.75, pc  # dots side by side vs stacked: about a coin toss
# with positions, shuffled patches cost accuracy
drop = res["accuracy"] - res["shuffled_accuracy"]
assert drop > 0.05, (res["shuffled_accuracy"], res["accuracy"])
# the position embeddings learn which patches share a row or a column
assert res["position_same_line_gap"] - res["position_same_line_gap_init"] > 0.1, res
assert abs(res["position_same_line_gap_init"]) < 0.15, res  # random vectors: no structure
# no built-in translation equivariance: trained on the left half, worse on the right half
assert res["translation_left_accuracy"] > res["translation_right_accuracy"] + 0.05, res
assert [p["patch"] for p in res["patch_sweep"]] == [4, 8], res["patch_sweep"]
assert [p["tokens"] for p in res["patch_sweep"]] == [17, 5], res["patch_sweep"]
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
assert st["patches read as words by a plain transformer encoder classify images"] == "ok", st
assert len(r["figures"]) == 6, r["figures"]
'

finish
