// selective-ssm's Part 1 (000 §9.2): the HiPPO-LegS memory (experiments/common/hippo.h) on random
// signals, its reconstruction error against the state size N beside the offline optimum, with the
// table, notes, results and figures it adds to the run.
//
//   HippoStudy h = hippo_study(cfg, ctx);   // reads hippo_n, hippo_length, hippo_trials,
//   h.falls[0];                             // smooth_width, band_cycles from cfg
//
// Two kinds of signal, each scaled to unit RMS: smooth (white noise under a Gaussian blur) and
// band-limited (random Fourier modes up to a cut-off).
#pragma once

#include <vector>

#include "experiments/config.h"
#include "experiments/run_context.h"

namespace attn::experiments {

struct HippoStudy {
  std::vector<double> ns;
  std::vector<double> online[2], optimal[2];  // mean RMSE over trials, per signal kind and N
  std::vector<double> gap[2];                 // mean RMSE between the two reconstructions
  bool falls[2] = {true, true};               // strictly decreasing in N
  double worst_gap = 0;                       // the largest gap
};

HippoStudy hippo_study(const Config& cfg, RunContext& ctx);

}  // namespace attn::experiments
