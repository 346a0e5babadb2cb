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
#include <vector>

#include "experiments/common/peak_memory.h"

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

}  // namespace attn::experiments::kit
