// norms-angles' report: per-seed summaries of the readings (norms_angles.h), the tables, the
// figures, and the rows of 004 §2.3 and §4.1 (norms_angles_claims.cpp).
//
//   std::vector<norms::SeedRun> runs = ...;                 // one trained model per seed
//   const norms::Summaries s = norms::summarise(runs);
//   norms::report_tables(cfg, ctx, runs, s);  norms::report_figures(cfg, ctx, runs);
//   norms::compare(cfg, ctx, s, unigram_accuracy);
#pragma once

#include <vector>

#include "experiments/config.h"
#include "experiments/positions/norms_angles.h"

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::norms {

struct SeedRun {
  ModelReading untrained, trained;  // the same initial weights, before and after training
};

// One layer's distribution shifts, mean over its heads: KS distances between positions inside
// and beyond the training length (|q|, |k|), and between trained pairs and pairs at distances no
// training window held (cos θ).
struct LayerShift {
  double ks_q = 0, ks_k = 0, ks_cos = 0;
};
LayerShift layer_shift(const LayerReading& layer);

// One seed's numbers, each the mean over layers (and heads) unless it is per layer.
struct SeedSummary {
  double accuracy_in = 0, accuracy_out = 0, loss_in = 0, loss_out = 0;
  int64_t scored_in = 0, scored_out = 0;
  double ks_q = 0, ks_k = 0, ks_cos = 0;
  double tv_norm_only = 0, tv_angle_only = 0;
  double far_mass = 0;  // rows beyond the training length: weight on untrained distances
  // The KS distance two samples of the sizes of |q| inside and beyond give by chance (the 5%
  // critical value 1.36 sqrt((n + m) / (n m))).
  double ks_norm_noise = 0;
  double entropy_rank_corr = 0;
  // log(trained / untrained) of mean |q| * mean |k| (rows inside the training length), and of
  // the within-row sd of cos θ: how much training scaled the norms, and the angles' spread.
  double norm_growth = 0, angle_growth = 0;
  std::vector<double> sink, recent, middle, tv_uniform;  // per layer
};

using Summaries = std::vector<SeedSummary>;
Summaries summarise(const std::vector<SeedRun>& runs);

// Tables and results.json entries; figures (accuracy by position, norm and angle distributions
// inside and beyond the training length, attention by relative key position per layer).
void report_tables(const Config& cfg,
                   RunContext& ctx,
                   const std::vector<SeedRun>& runs,
                   const Summaries& sums);
void report_figures(const Config& cfg, RunContext& ctx, const std::vector<SeedRun>& runs);

// The comparisons with 004 §2.3 and §4.1. unigram_accuracy: the most frequent character's
// held-out share, what a model that learned no context reaches.
void compare(const Config& cfg, RunContext& ctx, const Summaries& sums, double unigram_accuracy);

}  // namespace attn::experiments::norms
