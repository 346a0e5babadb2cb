// Reading timing curves on log-log axes: growth exponents and where two curves cross.
//
//   std::vector<double> ts{256, 512, 1024}, ms{0.5, 2.1, 8.3};
//   attn::experiments::log_log_slope(ts, ms);          // ~2: time grows like T^2
//   attn::experiments::log_log_crossing(ts, ratio);    // the T where ratio passes 1 (NaN if never)
#pragma once

#include <vector>

namespace attn::experiments {

// Least-squares slope of log y against log x over the points with x >= x_from (and finite,
// positive x and y): the exponent p of y ~ x^p. NaN with fewer than two such points.
double log_log_slope(const std::vector<double>& xs,
                     const std::vector<double>& ys,
                     double x_from = 0);

// The first x where ys passes the level 1 (from below to >= 1 when rising, or from above to <= 1
// when `falling`), interpolated linearly in log x and log y. NaN when it never does.
double log_log_crossing(const std::vector<double>& xs,
                        const std::vector<double>& ys,
                        bool falling = false);

}  // namespace attn::experiments
