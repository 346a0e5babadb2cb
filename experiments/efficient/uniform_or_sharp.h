// 004 §4.2 (PolaFormer) says linear attention's rows are more uniform than softmax's "and" of
// lower entropy. Entropy is itself a measure of uniformity (log n for the uniform row, 0 for a
// one-hot one), so the two cannot both hold. This compares both on the same rows: the entropy
// (as H / log n) and the largest weight (as n * max_j p_j: 1 for the uniform row, n for a
// one-hot one), for softmax, elu + 1 and elu + 1's sharpened replacement (the power map).
//
//   UniformityRows rows{ns, {"softmax", h0, m0}, {"elu + 1", h1, m1}, {"polar^3", h2, m2}};
//   compare_uniformity_and_entropy(rows, ctx);   // a table and a "004 §4.2" comparison
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiments/run_context.h"

namespace attn::experiments {

// One method's rows, one value per n: mean entropy / log n and mean largest weight.
struct MethodRows {
  std::string name;
  std::vector<double> entropy_ratio, max_weight;
};

struct UniformityRows {
  std::vector<int64_t> ns;
  MethodRows softmax, linear, sharpened;  // linear without, sharpened with the power map
};

void compare_uniformity_and_entropy(const UniformityRows& rows, RunContext& ctx);

// pred(a[i], b[i]) for every i: a claim about two methods' values that must hold at every n.
bool at_every_n(const std::vector<double>& a,
                const std::vector<double>& b,
                const std::function<bool(double, double)>& pred);

}  // namespace attn::experiments
