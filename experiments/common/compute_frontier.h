// The compute-optimal model size read off training curves ("IsoFLOP" profiles): for a budget of
// C floating-point operations, a model of N parameters can process D = C / (6 N) tokens (about
// 2 N per token forward and 4 N backward: Kaplan et al. 2020), so every training curve gives
// one loss at that budget; the size with the lowest loss is the best use of C.
//
//   std::vector<LossCurve> curves = {{.params = 3e3, .tokens = {...}, .loss = {...}}, ...};
//   auto profiles = iso_flop_profiles(curves, log_spaced(1e9, 1e12, 8));
//   profiles[k].n_opt;   // compute-optimal N at budget k (NaN unless an interior minimum)
//
// N_opt between the trained sizes: a parabola in log N through the best size and its two
// neighbours (the usual reading of an IsoFLOP curve, as in Hoffmann et al. 2022's approach 2);
// its vertex lies between the neighbours. A budget whose best size is the smallest or largest
// that covers it has no interior minimum: the optimum may lie outside the trained sizes.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace attn::experiments {

struct LossCurve {
  double params = 0;                 // N
  std::vector<double> tokens, loss;  // increasing tokens, the loss after that many
};

// The loss after `tokens` tokens, interpolated linearly in log(tokens) between the curve's
// points; NaN outside [tokens.front(), tokens.back()].
double loss_at_tokens(const LossCurve& curve, double tokens);

struct IsoFlopPoint {
  double params = 0, tokens = 0, loss = 0;
};

struct IsoFlop {
  double compute = 0;
  std::vector<IsoFlopPoint> points;  // the sizes whose curve reaches D = C / (6 N), by N
  size_t best = 0;                   // index of the lowest loss in points
  bool interior = false;             // best has a smaller and a larger neighbour
  double n_opt = NAN;                // parabola vertex (interior only)
  double loss_opt = NAN;             // the parabola's value there
};

// One profile per budget, for curves sorted by params (throws attn::Error otherwise). Budgets
// that fewer than 3 sizes reach are left out.
std::vector<IsoFlop> iso_flop_profiles(const std::vector<LossCurve>& curves,
                                       const std::vector<double>& budgets);

// n values from lo to hi, equally spaced in log (n >= 2, 0 < lo < hi).
std::vector<double> log_spaced(double lo, double hi, int n);

}  // namespace attn::experiments
