// The cost of several models' training steps against the sequence length T: time per step
// (median and fastest of interleaved rounds) and peak tensor memory, the measurement behind
// every "cost against T" part (attention-zoo, sparse-challenge, triangle-tradeoff).
//
//   kit::StepCosts costs(models.size());
//   for (int64_t T : lengths) {
//     ...build this length's batch and models, then one work per model...
//     costs.add(T, forward_backward_works, step_works, reps, budget_s);
//   }
//   costs.ms[i][j];  costs.min_ms[i][j];  costs.mib[i][j];   // model i at the j-th length
//   log_log_slope(costs.ts, costs.min_ms[i], costs.slope_from());   // growth exponent
//
// Memory is measured first, each model once and alone (PeakMemory: the tensor bytes a work adds
// at its peak, exact and repeatable); the timed works then run in alternation
// (time_interleaved), so a burst of outside load slows every model alike.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiments/common/peak_memory.h"

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::kit {

class StepCosts {
 public:
  explicit StepCosts(size_t models);

  // One length: the peak memory of each of `measured` (one per model), then `timed` (one per
  // model) interleaved for at most `reps` rounds of about `budget_s` seconds in all.
  void add(int64_t length,
           const std::vector<std::function<void()>>& measured,
           const std::vector<std::function<void()>>& timed,
           int reps,
           double budget_s);

  // Where growth exponents are fitted from: the third-longest length (the leading term
  // dominates most at the longest), or the first when there are fewer than three.
  double slope_from() const;

  std::vector<double> ts;                       // the lengths added, in order
  std::vector<std::vector<double>> ms, min_ms;  // [model][length]: median, fastest round (ms)
  std::vector<std::vector<double>> mib;         // [model][length]: peak tensor MiB

 private:
  PeakMemory probe_;
};

// The two figures of a measurement, a line per model against T on log-log axes: "step_time",
// the median time per training step, and "peak_memory", the exact peak tensor bytes of one
// forward + backward. labels[i] names model i; batch is the timed step's batch (in the title).
//
//   kit::step_cost_figures(ctx, costs, {"banded (window)", "dense (full)"}, /*batch=*/2);
void step_cost_figures(RunContext& ctx,
                       const StepCosts& costs,
                       const std::vector<std::string>& labels,
                       int64_t batch);

}  // namespace attn::experiments::kit
