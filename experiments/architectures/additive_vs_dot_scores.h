// additive-vs-dot's score step alone (experiments/architectures/additive_vs_dot.cpp): the scores
// (B,H,T,S) from random q and k, forward + backward, the dot product against additive, timed in
// alternation (interleaved_timing.h) with the peak tensor bytes of each.
//
//   Generator gen(seed);
//   additive::ScoreCost c = additive::score_cost(b, h, t, d_h, cfg, gen);  // c.time_ratio()
//   additive::ScoreSweeps s = additive::score_sweeps(cfg, ctx, gen);        // against T and d_h
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "experiments/config.h"
#include "experiments/run_context.h"

namespace attn::experiments::additive {

struct ScoreCost {
  double dot_ms = 0, add_ms = 0;          // medians
  double dot_min_ms = 0, add_min_ms = 0;  // the least disturbed rounds
  int64_t dot_bytes = 0, add_bytes = 0;
  double time_ratio() const { return add_ms / dot_ms; }
  // The ratio of the minima: a burst of outside load in one round moves a median of few rounds
  // but rarely both minima.
  double min_time_ratio() const { return add_min_ms / dot_min_ms; }
  double memory_ratio() const { return static_cast<double>(add_bytes) / dot_bytes; }
};

// The score step at batch b, h heads, T = S = t and head width d.
ScoreCost score_cost(int64_t b, int64_t h, int64_t t, int64_t d, const Config& cfg, Generator& gen);

// The sweeps against T (d_h = --scale_d) and against d_h (T = --scale_t), summarised.
struct ScoreSweeps {
  std::vector<double> d_h, memory_ratio_d, time_ratio_d;  // against d_h (time: fastest rounds)
  double memory_slope = 0;  // the memory ratio grows like d_h^memory_slope
  // The ratio of the fastest rounds over every cell of both sweeps: median, least, most.
  double typical_ratio = 0, min_ratio = 0, max_ratio = 0;
};

// Both sweeps: their tables, results.json keys, a note and the figures.
ScoreSweeps score_sweeps(const Config& cfg, RunContext& ctx, Generator& gen);

}  // namespace attn::experiments::additive
