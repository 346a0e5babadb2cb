// triangle-tradeoff's measurements (experiments/efficient/triangle_tradeoff.cpp) and the
// triangle judged from them (triangle_tradeoff_claims.cpp): each model's corners scored, the
// document's table beside ours, and the comparison.
//
//   const triangle::Timed tm = timing_part(cfg, ctx, ks);   // ... decoding, recall
//   triangle::judge(cfg, ctx, ks, tm, dec, rc);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiments/common/mixer_model.h"
#include "experiments/common/ssm_mixer.h"
#include "experiments/config.h"
#include "experiments/kit/step_costs.h"
#include "experiments/run_context.h"

namespace attn::experiments::triangle {

// One model of the comparison: its name in tables and result keys, and its mixer. The built-ins
// (softmax, linear, S6, window) come first, in that order; then the causal rows of --plugin files
// (nn::mixer_registry().plugin_rows()), which run in Parts 1 and 3 but have no decoding state
// to weigh (Part 2) and enter no claim.
struct Kind {
  std::string name;
  // Layer `layer`'s mixer in a model whose inputs are at most max_len long (a plugin row may
  // size parameters by it; the built-ins ignore it).
  std::function<Mixer(int64_t max_len, int64_t layer, Generator& gen)> make;
  std::string origin;  // "" for a built-in; the plugin file that added the row

  bool plugin() const { return !origin.empty(); }
  MixerFactory at_length(int64_t max_len) const {
    return [this, max_len](int64_t layer, Generator& gen) { return make(max_len, layer, gen); };
  }
};

inline S6MixerOptions s6_options(const Config& cfg) {
  return {.expand = cfg.get_int("s6_expand")};
}

// Part 1: time and peak memory of a training step against T.
struct Timed : kit::StepCosts {
  using StepCosts::StepCosts;
  std::vector<double> time_slope, memory_slope;  // [kind], fitted on the fastest rounds
};

// Part 2: the decoding state, measured and in closed form.
struct Decoded {
  // [kind][position - 1], the built-in kinds only (a plugin row has no decoding interface)
  std::vector<std::vector<int64_t>> measured, closed;
  std::vector<double> max_abs_diff;
};

// What Part 2 prints for a plugin row.
inline constexpr const char* kNoDecoding =
    "not measured (a plugin mixer has no decoding state interface)";

// Bytes the decoding state grows by per token over the second half of the decoded positions.
inline double bytes_per_token(const std::vector<int64_t>& measured, int64_t steps) {
  return static_cast<double>(measured[steps - 1] - measured[steps / 2 - 1]) /
         static_cast<double>(steps - steps / 2);
}

// Part 3: associative recall after equal training.
struct Recalled {
  std::vector<double> accuracy;
  std::vector<int64_t> params;
  double chance = 0, window_ceiling = 0;
};

// The document's table, ours with each model's corners scored, the corners' figure, then the
// document's costs, matching column and corners against the run. ks in kinds() order.
void judge(const Config& cfg,
           RunContext& ctx,
           const std::vector<Kind>& ks,
           const Timed& tm,
           const Decoded& dec,
           const Recalled& rc);

}  // namespace attn::experiments::triangle
