#!/usr/bin/env bash
# pre-post-norm and ablate-block in quick mode.
# pre-post-norm (001 pre-norm versus post-norm, 000 Algorithm 3): the sweep has one cell per
# (depth, norm, schedule, learning rate) with every rate and count in range; at the top learning
# rate without warm-up post-norm fails (it sits on the character-frequency plateau, far above the
# failure line) while pre-norm trains (far below it); post-norm's gradients at initialisation
# are spread over blocks several times more than pre-norm's. Bad settings exit 2 and leave no
# run folder.
# ablate-block (002 §39.8): one score per task x variant, all in [0, 1]; the intact block
# learns reversal, and removing the residual connections or the positions costs it more than
# the margin; sort without positions stays close to the intact block (its answer ignores order).
#   tests/cli/experiments_blocks.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"

listed pre-post-norm "001 \(the transformer block: pre-norm versus post-norm\), 000 Algorithm 3 "
expect 2 "--nhead 5 must divide --d_model 32" run pre-post-norm --nhead 5 --out "$tmp/bad1"
expect 2 "--steps 40 must exceed --warmup 50" run pre-post-norm --steps 40 --out "$tmp/bad2"
expect 2 "lrs" run pre-post-norm --lrs 0,1e-2 --out "$tmp/bad3"
for d in bad1 bad2 bad3; do
  [[ -e "$tmp/$d" ]] && fail "a refused pre-post-norm wrote $tmp/$d" || pass "no folder for $d"
done

check pre-post-norm '
sweep = res["sweep"]
assert len(sweep) == 1 * 2 * 2 * 2, len(sweep)  # quick: 6 blocks x norm x schedule x 2 lrs
for c in sweep:
    assert 0 <= c["failed"] <= 1 and 0 <= c["stopped_by_trainer"] <= c["failed"], c
    assert len(c["final_losses"]) == 1, c
    for l in c["final_losses"]:
        assert l is None or 0 < l < 10, c
assert abs(res["fail_loss"] - 0.95 * res["unigram_entropy"]) < 1e-9, res
assert 2 < res["unigram_entropy"] < 4, res["unigram_entropy"]
grads = res["init_gradients"]
assert [(g["depth"], g["norm"]) for g in grads] == [(6, "post-norm"), (6, "pre-norm")], grads
for g in grads:
    assert len(g["per_block"]) == 6 and all(x > 0 for x in g["per_block"]), g
# the key results, each with a margin in the quick run (seeds 1-3 tried, with the kernels whose
# bits do not depend on the thread count: post-norm ends at 2.92-2.93, on the plateau; pre-norm
# at 2.07-2.59, the failure line is at 2.765; seed 1, the default, is the closest at 0.18)
assert res["top_lr"] == 0.02, res["top_lr"]
top = {(c["norm"], c["warmup"]): c for c in sweep if c["lr"] == 0.02}
post, pre = top[("post-norm", False)], top[("pre-norm", False)]
assert post["failed"] == 1 and pre["failed"] == 0, (post, pre)
assert post["final_losses"][0] is None or post["final_losses"][0] > res["fail_loss"], post
assert pre["final_losses"][0] < res["fail_loss"] - 0.1, pre  # trains: below the line
assert res["init_grad_spread_post"] > 2 * res["init_grad_spread_pre"], res
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
assert st["post-norm without warm-up fails more often than pre-norm at a high learning rate"] == "ok", st
assert len(r["figures"]) == 2, r["figures"]
'

listed ablate-block "002 §39.8 "
expect 2 "--nhead 3 must divide --d_model 32" run ablate-block --nhead 3 --out "$tmp/bad4"
expect 2 "second_task" run ablate-block --second_task khop --out "$tmp/bad5"
for d in bad4 bad5; do
  [[ -e "$tmp/$d" ]] && fail "a refused ablate-block wrote $tmp/$d" || pass "no folder for $d"
done

check ablate-block '
scores = res["scores"]
variants = ["intact", "no_layer_norm", "no_residual", "no_ffn", "no_positions"]
assert [(s["task"], s["variant"]) for s in scores] == \
    [(t, v) for t in ("reversal", "sort") for v in variants], scores
for s in scores:
    assert 0 <= s["exact_match"] <= 1 and 0 <= s["token_accuracy"] <= 1, s
    assert s["diverged_runs"] == 0 and 0 < s["loss"] < 10, s
tok = {(s["task"], s["variant"]): s["token_accuracy"] for s in scores}
# quick runs with seeds 1-3: reversal loses at least 0.23 without residuals or positions, sort at
# least 0.53 without residuals; sort without positions is within 0.03 of the intact block
assert tok[("reversal", "intact")] > tok[("reversal", "no_residual")] + 0.1, tok
assert tok[("reversal", "intact")] > tok[("reversal", "no_positions")] + 0.1, tok
assert tok[("sort", "intact")] > tok[("sort", "no_residual")] + 0.3, tok
assert tok[("sort", "no_positions")] > tok[("sort", "intact")] - 0.1, tok
st = {e["name"]: e["outcome"] for e in cmp[0]["entries"]}
for k in ("without positions the model cannot use order: reversal fails",
          "a task whose answer ignores input order needs no positions (sort)",
          "removing the residual connections makes training fail"):
    assert st[k] == "ok", (k, st)
assert len(r["figures"]) == 1, r["figures"]
'

finish
