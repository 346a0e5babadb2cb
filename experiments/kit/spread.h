// The mean of a few repeated measurements (seeds) and their sample standard deviation, the
// spread a comparison's tolerance is built from.
//
//   const kit::Spread s = kit::spread_of({0.91, 0.94, 0.93});   // s.mean 0.9267, s.sd 0.0153
//   cmp.add("accuracy", 1.0, s.mean, std::max(3 * s.sd, floor), reason);
#pragma once

#include <cmath>
#include <vector>

#include "experiments/kit/summary.h"

namespace attn::experiments::kit {

struct Spread {
  double mean = 0, sd = 0;  // sd = sqrt(sum (x - mean)^2 / (n - 1)); 0 for one value
};

// Throws attn::Error when xs is empty (as mean_of does).
inline Spread spread_of(const std::vector<double>& xs) {
  Spread s{mean_of(xs), 0};
  for (double x : xs) s.sd += (x - s.mean) * (x - s.mean);
  if (xs.size() > 1) s.sd = std::sqrt(s.sd / static_cast<double>(xs.size() - 1));
  return s;
}

// The standard error of the difference of two rates a and b (accuracies, exact-match rates),
// each measured on n samples, at their pooled rate p = (a + b) / 2: sqrt(2 p (1 - p) / n). Two
// equally good models differ by less than about two of these by chance. (0.5, 0.5, n) gives the
// widest, for a bound that holds whatever the rates.
inline double rate_difference_se(double a, double b, double n) {
  const double p = (a + b) / 2;
  return std::sqrt(2 * p * (1 - p) / n);
}

}  // namespace attn::experiments::kit
