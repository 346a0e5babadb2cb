#include "experiments/common/loglog.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

double log_log_slope(const std::vector<double>& xs, const std::vector<double>& ys, double x_from) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size() && i < ys.size(); ++i) {
    if (!(xs[i] >= x_from && xs[i] > 0 && ys[i] > 0 && std::isfinite(ys[i]))) continue;
    const double lx = std::log(xs[i]), ly = std::log(ys[i]);
    n += 1;
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  const double var = n * sxx - sx * sx;
  if (n < 2 || var <= 0) return std::numeric_limits<double>::quiet_NaN();
  return (n * sxy - sx * sy) / var;
}

double log_log_crossing(const std::vector<double>& xs,
                        const std::vector<double>& ys,
                        bool falling) {
  const double sign = falling ? -1 : 1;  // a falling crossing of y is a rising one of 1/y
  for (size_t i = 1; i < xs.size() && i < ys.size(); ++i) {
    const double a = sign * std::log(ys[i - 1]), b = sign * std::log(ys[i]);
    if (a < 0 && b >= 0) {
      const double f = -a / (b - a);
      return std::exp(std::log(xs[i - 1]) + f * (std::log(xs[i]) - std::log(xs[i - 1])));
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace attn::experiments
