// scaling-law's fits on a sweep's runs: L(N) on the losses at the common token budget, L(D) on
// the largest model's curve, and the compute frontier N_opt(C) from IsoFLOP profiles, each with
// percentile-bootstrap intervals, its notes, results and figures.
//
//   Runs runs = ...;                          // runs[i][k]: size i (sorted by N), seed k
//   BootstrapFit fn = fit_size_law(runs, checkpoint, cfg, gen, ctx);   // cfg: bootstrap, seeds
//   BootstrapFit fd = fit_data_law(runs, cfg, gen, ctx);               //      warmup
//   Frontier fr = compute_frontier(runs, cfg, gen, ctx);              //      budgets
//   fr.loss_law->fit.alpha;   // L(C): the loss of the best size at each budget against C
//
// The fits are nonlinear least squares by variable projection (experiments/common/
// power_law_fit.h). Their 95% intervals are percentile bootstraps: a replicate redraws the
// groups of held-out windows (--groups blocks of consecutive windows, the same draw for every
// size so the comparison between sizes stays paired) and, for each size, its seeds, both with
// replacement, and refits. With one seed the interval holds the evaluation noise only, not the
// run-to-run noise of training; more --seeds widen it honestly.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "experiments/common/power_law_fit.h"
#include "experiments/common/scaling_run.h"
#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

// The Chinchilla rule "scale N and D proportionally" with C = 6 N D: N_opt ~ C^0.5 (Hoffmann et
// al. 2022 estimate about 0.5).
constexpr double kProportionalExponent = 0.5;

// runs[i][k]: size i (sorted by non-embedding parameters), seed k.
using Runs = std::vector<std::vector<ScalingCurve>>;

// Size i's non-embedding parameters N.
double nonemb(const Runs& runs, size_t i);
// Size i's held-out loss at checkpoint j: the mean over its seeds of the mean over the groups.
double mean_loss(const Runs& runs, size_t i, size_t j);
// "[0.061, 0.094]"
std::string interval_text(const Interval& i, int precision = 3);

// Every size's table row and "sizes" results at checkpoint `last` (the common token budget).
void report_sizes(const Runs& runs, size_t last, const Config& cfg, RunContext& ctx);
// L(N) = a N^-alpha + c on every size's loss at checkpoint `last`.
BootstrapFit fit_size_law(
    const Runs& runs, size_t last, const Config& cfg, Generator& gen, RunContext& ctx);
// L(D) = b D^-beta + c_D on the largest model's curve after twice the warm-up.
BootstrapFit fit_data_law(const Runs& runs, const Config& cfg, Generator& gen, RunContext& ctx);

struct Frontier {
  double slope = NAN;
  Interval interval{NAN, NAN};
  int64_t interior = 0, budgets = 0;
  int64_t smallest_best = 0, largest_best = 0;  // budgets whose best size is at that end
  // L(C) = a C^-gamma + c on the lowest loss at each budget (unset below 3 budgets).
  std::optional<BootstrapFit> loss_law;
};

// N_opt against C over --budgets budgets, from the IsoFLOP profiles of the seed-mean curves.
Frontier compute_frontier(const Runs& runs, const Config& cfg, Generator& gen, RunContext& ctx);

}  // namespace attn::experiments
