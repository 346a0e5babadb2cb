// attention-zoo's measurements (experiments/efficient/attention_zoo.cpp), its length test for
// dual chunk attention (attention_zoo_dca.cpp) and the document's claims judged on them
// (attention_zoo_claims.cpp).
//
//   zoo::DcaExtrapolation dca = zoo::dca_part(cfg, ctx);   // part 3: trains, reports
//   zoo::compare(ctx, variants, accuracies, costs, &dca, rope_train_len);   // or dca nullptr
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/common/zoo_variants.h"
#include "experiments/config.h"
#include "experiments/kit/step_costs.h"
#include "experiments/run_context.h"

namespace attn::experiments::zoo {

// Where the variant `name` is in vs; -1 when it is not.
inline int index_of(const std::vector<ZooVariant>& vs, const std::string& name) {
  for (size_t i = 0; i < vs.size(); ++i)
    if (vs[i].name == name) return static_cast<int>(i);
  return -1;
}

// The variants' names, in vs's order.
inline std::vector<std::string> names_of(const std::vector<ZooVariant>& vs) {
  std::vector<std::string> names;
  for (const ZooVariant& v : vs) names.push_back(v.name);
  return names;
}

// Part 1: held-out accuracy per variant (in vs's order).
struct Accuracies {
  std::vector<double> recall, long_range;
  std::vector<double> ablations;  // recall of accuracy_part's ablations, in their order
  // Reformer's layer with one chunk holding every position: dense shared-QK attention, no
  // hashing (tests/nn/zoo_attention_test.cpp proves the equality). NaN when not run.
  double recall_shared_qk_dense = NAN;
};

// Part 2: time per training step and peak memory against T, per variant.
struct Costs : kit::StepCosts {
  using StepCosts::StepCosts;
  std::vector<double> time_slope, memory_slope;  // [variant], fitted on the medians
};

// Part 3: next-character accuracy and loss per --rope_eval_lengths, the same weights read with
// plain RoPE indices and with DCA's.
struct DcaExtrapolation {
  std::vector<double> plain_accuracy, dca_accuracy;
  std::vector<double> plain_loss, dca_loss;
  double max_dca_distance = 0;  // the largest query-key distance DCA used at the longest length
  double train_seconds = 0;
};

// Trains the RoPE model and prints part 3's section, table, results (rope_*, dca_max_distance)
// and figure.
DcaExtrapolation dca_part(const Config& cfg, RunContext& ctx);

// The document's claims on the memory exponents, recall against softmax (Linformer, Reformer,
// Synthesizer), dual chunk attention beyond its training length (dca: nullptr when it did not
// run) and the recurrent variants.
void compare(RunContext& ctx,
             const std::vector<ZooVariant>& vs,
             const Accuracies& a,
             const Costs& c,
             const DcaExtrapolation* dca,
             int64_t rope_train_len);

}  // namespace attn::experiments::zoo
