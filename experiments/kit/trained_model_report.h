// What the report of a trained model reads off its training: the per-step losses and the
// evaluations as chart series, the stop line, the first n held-out examples an analysis scores,
// and the unigram baseline (each target token predicted from its frequency alone).
//
//   p.series = {kit::step_series("training batch", r.losses),   // x = 1, 2, ...
//               kit::eval_series(r, "loss", "held-out")};       // x = the evaluated steps
//   ctx.preformatted(kit::stop_line(summary));
//   const auto set = kit::first_examples(run.setup.heldout_set, 200);
//   const kit::Unigram u = kit::unigram(set);   // u.entropy nats per token, u.distinct tokens
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "data/task.h"
#include "experiments/report/charts.h"
#include "train/run/run_train.h"

namespace attn::experiments::kit {

// ys[i] at x = first + i: a per-step curve, a line without markers.
inline Series step_series(std::string name, const std::vector<double>& ys, double first = 1) {
  Series s{std::move(name), std::vector<double>(ys.size()), ys, "", false, false};
  for (size_t i = 0; i < ys.size(); ++i) s.x[i] = first + static_cast<double>(i);
  return s;
}

// The evaluations of `r` that measured `metric`, against their step (with markers).
inline Series eval_series(const train::TrainResult& r,
                          const std::string& metric,
                          std::string name) {
  Series s{std::move(name), {}, {}, ""};
  for (const auto& [step, m] : r.evals)
    if (m.count(metric)) s.x.push_back(static_cast<double>(step)), s.y.push_back(m.at(metric));
  return s;
}

// "<model description>\nstopped after step <n> (<why>), <seconds> s".
inline std::string stop_line(const train::TrainSummary& s) {
  return fmt::format("{}\nstopped after step {} ({}), {:.1f} s", s.model_description,
                     s.result.last_step, s.result.stop_reason, s.result.wall_seconds);
}

// The first min(n, size) examples of `set`.
inline std::vector<data::Example> first_examples(const std::vector<data::Example>& set, int64_t n) {
  const auto k = static_cast<std::ptrdiff_t>(std::min(set.size(), static_cast<size_t>(n)));
  return {set.begin(), set.begin() + k};
}

// entropy = -sum_t p_t log p_t over the target tokens of a set, p_t = count_t / total: the
// cross-entropy of predicting each from its frequency alone (exp of it: the perplexity).
struct Unigram {
  double entropy = 0;
  int64_t distinct = 0;  // tokens seen
};

inline Unigram unigram(const std::vector<data::Example>& set) {
  std::map<int64_t, double> counts;
  double total = 0;
  for (const auto& ex : set)
    for (int64_t id : ex.tgt) counts[id] += 1, total += 1;
  Unigram u{0, static_cast<int64_t>(counts.size())};
  for (const auto& [id, n] : counts) u.entropy -= n / total * std::log(n / total);
  return u;
}

}  // namespace attn::experiments::kit
