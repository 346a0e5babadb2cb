// pre-post-norm's sweep cells and gradients at initialisation (experiments/architectures/
// pre_post_norm.cpp measures them) and the claims judged on them (pre_post_norm_claims.cpp).
//
//   pre_post::judge(cfg, ctx, cells, init_gradients);   // headline rates, the comparison
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "experiments/config.h"
#include "experiments/kit/summary.h"
#include "experiments/run_context.h"

namespace attn::experiments::pre_post {

// One training run of the sweep.
struct Outcome {
  bool exploded = false;  // the trainer stopped the run (NaN, inf or an exploding loss)
  int64_t stop_step = 0;  // the step it stopped at (exploded) or the last step
  double loss = std::numeric_limits<double>::quiet_NaN();  // final held-out loss
  bool failed = false;  // exploded, or loss above fail_fraction x the unigram entropy
};

// One (depth, norm, schedule, learning rate) of the sweep, every seed.
struct Cell {
  int64_t depth = 0;
  bool pre = false, warm = false;
  double lr = 0;
  std::vector<Outcome> runs;  // one per seed
  int64_t failures() const {
    return std::count_if(runs.begin(), runs.end(), [](const Outcome& o) { return o.failed; });
  }
  int64_t explosions() const {
    return std::count_if(runs.begin(), runs.end(), [](const Outcome& o) { return o.exploded; });
  }
  double failure_rate() const {
    return static_cast<double>(failures()) / static_cast<double>(runs.size());
  }
  // Mean final loss of the runs the trainer did not stop (NaN if it stopped them all).
  double mean_loss() const {
    double s = 0;
    int64_t n = 0;
    for (const auto& o : runs)
      if (!o.exploded) s += o.loss, ++n;
    return n ? s / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
  }
};

// The gradient norm of each block at initialisation.
struct InitGradients {
  int64_t depth = 0;
  bool pre = false;
  std::vector<double> norms;  // per block, mean over seeds
  double last_over_first() const { return norms.back() / norms.front(); }
  // Largest over smallest block: 1 = every block gets the same gradient.
  double spread() const { return kit::max_of(norms) / kit::min_of(norms); }
};

// The headline failure rates, the gradient pattern at initialisation and the best losses
// (results.json), then the document's claims judged on them.
void judge(const Config& cfg,
           RunContext& ctx,
           const std::vector<Cell>& cells,
           const std::vector<InitGradients>& grads);

}  // namespace attn::experiments::pre_post
