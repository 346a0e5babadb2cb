#include "experiments/common/compute_frontier.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

double loss_at_tokens(const LossCurve& curve, double tokens) {
  const auto& t = curve.tokens;
  if (t.empty() || !(tokens >= t.front() && tokens <= t.back())) return NAN;
  const size_t j = static_cast<size_t>(std::lower_bound(t.begin(), t.end(), tokens) - t.begin());
  if (t[j] == tokens) return curve.loss[j];
  const double w = (std::log(tokens) - std::log(t[j - 1])) / (std::log(t[j]) - std::log(t[j - 1]));
  return curve.loss[j - 1] + w * (curve.loss[j] - curve.loss[j - 1]);
}

namespace {

// The vertex of the parabola through (x0,y0), (x1,y1), (x2,y2) with y1 below both others
// (so the parabola opens upwards and its vertex lies in [x0, x2]): x and the value there.
std::pair<double, double> vertex(double x0, double y0, double x1, double y1, double x2, double y2) {
  // Divided differences: y = y0 + d1 (x - x0) + d2 (x - x0)(x - x1).
  const double d1 = (y1 - y0) / (x1 - x0);
  const double d2 = ((y2 - y1) / (x2 - x1) - d1) / (x2 - x0);
  if (!(d2 > 0)) return {x1, y1};  // three equal losses: no curvature to read
  // dy/dx = d1 + d2 (2x - x0 - x1) = 0.
  const double x = (x0 + x1) / 2 - d1 / (2 * d2);
  return {x, y0 + d1 * (x - x0) + d2 * (x - x0) * (x - x1)};
}

}  // namespace

std::vector<IsoFlop> iso_flop_profiles(const std::vector<LossCurve>& curves,
                                       const std::vector<double>& budgets) {
  for (size_t i = 1; i < curves.size(); ++i)
    if (!(curves[i - 1].params < curves[i].params))
      throw Error("iso_flop_profiles: the curves must be sorted by increasing params");
  std::vector<IsoFlop> out;
  for (double c : budgets) {
    IsoFlop p;
    p.compute = c;
    for (const auto& curve : curves) {
      const double d = c / (6 * curve.params);
      const double l = loss_at_tokens(curve, d);
      if (!std::isnan(l)) p.points.push_back({curve.params, d, l});
    }
    if (p.points.size() < 3) continue;
    for (size_t i = 1; i < p.points.size(); ++i)
      if (p.points[i].loss < p.points[p.best].loss) p.best = i;
    p.interior = p.best > 0 && p.best + 1 < p.points.size();
    if (p.interior) {
      const auto& a = p.points[p.best - 1];
      const auto& b = p.points[p.best];
      const auto& e = p.points[p.best + 1];
      const auto [x, y] = vertex(std::log(a.params), a.loss, std::log(b.params), b.loss,
                                 std::log(e.params), e.loss);
      p.n_opt = std::exp(x);
      p.loss_opt = y;
    }
    out.push_back(p);
  }
  return out;
}

std::vector<double> log_spaced(double lo, double hi, int n) {
  if (n < 2 || !(lo > 0) || !(hi > lo)) throw Error("log_spaced: needs n >= 2 and 0 < lo < hi");
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * i / (n - 1)));
  return v;
}

}  // namespace attn::experiments
