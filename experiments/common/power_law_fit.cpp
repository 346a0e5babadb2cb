#include "experiments/common/power_law_fit.h"

#include "experiments/common/least_squares.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// The best (a, c) for one alpha on the rescaled x (z = x / x_ref), and its RSS.
struct LinearPart {
  double a = 0, c = 0, rss = 0;
  bool c_clamped = false;
};

LinearPart fit_for_alpha(const std::vector<double>& z, const std::vector<double>& y, double alpha) {
  const int64_t n = static_cast<int64_t>(z.size());
  std::vector<double> design(static_cast<size_t>(2 * n)), u(z.size());
  for (size_t i = 0; i < z.size(); ++i) {
    u[i] = std::pow(z[i], -alpha);
    design[2 * i] = u[i];
    design[2 * i + 1] = 1.0;
  }
  LinearPart p;
  const LeastSquares ls = least_squares(design, y, n, 2, 1);
  p.a = ls.x[0];
  p.c = ls.x[1];
  if (p.c < 0) {  // the floor of a loss is not negative: refit through the origin
    double uy = 0, uu = 0;
    for (size_t i = 0; i < z.size(); ++i) uy += u[i] * y[i], uu += u[i] * u[i];
    p.a = uy / uu;
    p.c = 0;
    p.c_clamped = true;
  }
  for (size_t i = 0; i < z.size(); ++i) {
    const double r = y[i] - p.a * u[i] - p.c;
    p.rss += r * r;
  }
  return p;
}

}  // namespace

double PowerLawFit::at(double x) const {
  return a * std::pow(x, -alpha) + c;
}

PowerLawFit fit_power_law(const std::vector<double>& x,
                          const std::vector<double>& y,
                          double alpha_max) {
  if (x.size() != y.size() || x.size() < 3)
    throw Error(
        fmt::format("fit_power_law: needs at least 3 points and as many y as x (got {} x, {} y)",
                    x.size(), y.size()));
  if (!(alpha_max > 0)) throw Error("fit_power_law: alpha_max must be positive");
  double log_ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !std::isfinite(x[i]) || !std::isfinite(y[i]))
      throw Error(
          fmt::format("fit_power_law: point {} is ({}, {}); x must be positive and both "
                      "finite",
                      i, x[i], y[i]));
    log_ref += std::log(x[i]) / static_cast<double>(x.size());
  }
  // z = x / x_ref with x_ref the geometric mean: u = z^(-alpha) stays near 1 in the middle of
  // the data for every alpha, which keeps the two columns [u, 1] well scaled.
  const double x_ref = std::exp(log_ref);
  std::vector<double> z(x.size());
  for (size_t i = 0; i < x.size(); ++i) z[i] = x[i] / x_ref;

  // Grid: alpha = alpha_max * k / K. alpha = 0 itself is left out (u = 1 duplicates the
  // constant column); the smallest grid alpha still separates the columns.
  constexpr int kGrid = 400;
  auto rss_at = [&](double alpha) { return fit_for_alpha(z, y, alpha).rss; };
  int best = 1;
  double best_rss = rss_at(alpha_max / kGrid);
  for (int k = 2; k <= kGrid; ++k) {
    const double r = rss_at(alpha_max * k / kGrid);
    if (r < best_rss) best_rss = r, best = k;
  }
  // Golden-section search on [alpha_(best-1), alpha_(best+1)], where RSS has its grid minimum.
  double lo = alpha_max * std::max(best - 1, 1) / kGrid;
  double hi = alpha_max * std::min(best + 1, kGrid) / kGrid;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
  double r1 = rss_at(m1), r2 = rss_at(m2);
  for (int it = 0; it < 60; ++it) {
    if (r1 < r2) {
      hi = m2, m2 = m1, r2 = r1;
      m1 = hi - g * (hi - lo), r1 = rss_at(m1);
    } else {
      lo = m1, m1 = m2, r1 = r2;
      m2 = lo + g * (hi - lo), r2 = rss_at(m2);
    }
  }
  const double alpha = (lo + hi) / 2;
  const LinearPart p = fit_for_alpha(z, y, alpha);
  PowerLawFit f;
  f.alpha = alpha;
  f.a = p.a * std::pow(x_ref, alpha);  // a z^-alpha = a x_ref^alpha x^-alpha
  f.c = p.c;
  f.rss = p.rss;
  f.rms = std::sqrt(p.rss / static_cast<double>(x.size()));
  f.c_clamped = p.c_clamped;
  return f;
}

Interval percentile_interval(std::vector<double> samples, double level) {
  if (samples.empty()) throw Error("percentile_interval: no samples");
  if (!(level > 0 && level < 1)) throw Error("percentile_interval: level must be in (0, 1)");
  std::sort(samples.begin(), samples.end());
  auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(samples.size() - 1);
    const size_t i = static_cast<size_t>(std::floor(pos));
    const size_t j = std::min(i + 1, samples.size() - 1);
    return samples[i] + (pos - static_cast<double>(i)) * (samples[j] - samples[i]);
  };
  return {quantile((1 - level) / 2), quantile((1 + level) / 2)};
}

BootstrapFit bootstrap_power_law(const std::vector<double>& x,
                                 const std::function<std::vector<double>(Generator*)>& draw,
                                 int64_t replicates,
                                 Generator& gen,
                                 double level) {
  if (replicates < 1) throw Error("bootstrap_power_law: needs at least one replicate");
  BootstrapFit b;
  const std::vector<double> y = draw(nullptr);
  b.fit = fit_power_law(x, y);
  double mean = 0, tss = 0;
  for (double v : y) mean += v / static_cast<double>(y.size());
  for (double v : y) tss += (v - mean) * (v - mean);
  b.r_squared = tss > 0 ? 1 - b.fit.rss / tss : 0;
  std::vector<double> cs;
  for (int64_t r = 0; r < replicates; ++r) {
    const PowerLawFit f = fit_power_law(x, draw(&gen));
    b.alphas.push_back(f.alpha);
    cs.push_back(f.c);
  }
  b.alpha = percentile_interval(b.alphas, level);
  b.c = percentile_interval(cs, level);
  return b;
}

}  // namespace attn::experiments
