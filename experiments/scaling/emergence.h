// emergence's runs and their report: one trained model per size and seed, scored on held-out
// additions, and the statistics that compare the two kinds of metric.
//
//   EmergenceGrid g = ...;                         // g.points[i][k]: size i, seed k
//   std::vector<double> em = seed_curve(g, 0, &AdditionScore::exact_match);   // over sizes
//   double a = abruptness(em);                     // 1/(n-1) .. 1
//   report_emergence(g, ctx);                      // table, figure, results, comparisons
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "experiments/scaling/emergence_task.h"

namespace attn::experiments {

class RunContext;

struct SizePoint {
  int64_t d_model = 0, parameters = 0;  // parameters counted from the built model
  AdditionScore score;
};

struct EmergenceGrid {
  std::vector<std::vector<SizePoint>> points;  // [size][seed], sizes in increasing order
  int64_t answer_length = 0, eval_size = 0;
};

// How much of a curve's movement its largest single step takes:
//   max_i |y_{i+1} - y_i| / sum_i |y_{i+1} - y_i|
// 1/(n-1) when every step between adjacent sizes is equal, 1 when all of it happens in one step
// (NaN for a flat curve). It ignores the scale of the metric, so exact match (0..1) and
// log-likelihood (nats) are compared on the same footing.
double abruptness(const std::vector<double>& y);

// One metric over the sizes for seed k; a member pointer or any callable on AdditionScore.
template <class Metric>
std::vector<double> seed_curve(const EmergenceGrid& g, size_t seed, Metric metric) {
  std::vector<double> out;
  for (const auto& size : g.points)
    out.push_back(static_cast<double>(std::invoke(metric, size[seed].score)));
  return out;
}

// The table, the figure, results.json and the comparison rows.
void report_emergence(const EmergenceGrid& g, RunContext& ctx);

}  // namespace attn::experiments
