// sparse-challenge's models (sparse_challenge.cpp): the banded, dense and banded + global
// classifiers of sparse_challenge_model.h, then one per --plugin mixer row, each built for a
// length, and trained and scored on one task; and the figures and notes that show every model.
//
//   const std::vector<sparse::Variant> vs = sparse::variants(cfg);   // banded, dense, global, ...
//   const sparse::Trained r = sparse::train_and_eval(cfg, vs[i], i, "match", 256, seed);
//   LongRangeClassifier m(sparse::model_options(cfg, vs[i], vocab, 256, seed), init);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/tasks/long_range.h"
#include "experiments/config.h"
#include "experiments/efficient/sparse_challenge_model.h"
#include "experiments/kit/step_costs.h"
#include "experiments/run_context.h"
#include "nn/mixer/mixer_registry.h"

namespace attn::experiments::sparse {

// The built-ins, in this order (their indices into variants()).
inline constexpr size_t kBanded = 0, kDense = 1, kGlobal = 2, kBuiltIns = 3;

// One model of the comparison.
struct Variant {
  std::string key;    // in results.json keys: banded, dense, global, or the plugin row's name
  std::string label;  // in tables and figures
  std::optional<nn::MixerRow> plugin;  // a plugin row's mixer, or none for a built-in
};

// banded, dense, the window plus global tokens ("banded + global", with " + random" when
// --random_links > 0), then every row of nn::mixer_registry().plugin_rows() (a classifier reads
// every position, so a causal mixer and a non-causal one both fit).
std::vector<Variant> variants(const Config& cfg);

// Variant `v` for length t (variants()[index] is v); seed draws the third model's random links.
LongRangeClassifierOptions model_options(
    const Config& cfg, const Variant& v, size_t index, int64_t vocab, int64_t t, uint64_t seed);

data::LongRangeTask make_task(const std::string& mode, int64_t t);

struct Trained {
  double accuracy = 0, ms_per_step = 0;
};

// Variant `v` (variants()[index]) trained for --steps on `mode` at length t, then its held-out
// accuracy and training time per step.
Trained train_and_eval(const Config& cfg,
                       const Variant& v,
                       size_t index,
                       const std::string& mode,
                       int64_t t,
                       uint64_t seed);

// A note per plugin row: its growth exponents ([variant], fitted from r.slope_from()) and its
// cost at the longest T beside dense attention's.
void plugin_cost_notes(RunContext& ctx,
                       const std::vector<Variant>& vs,
                       const kit::StepCosts& r,
                       const std::vector<double>& slope_mem,
                       const std::vector<double>& slope_time);

}  // namespace attn::experiments::sparse
