// Fitting a power law with a floor, y = a * x^(-alpha) + c, the shape of a scaling law (loss
// against parameters N or tokens D), and a percentile interval for bootstrap replicates.
//
//   std::vector<double> n{1e3, 1e4, 1e5, 1e6}, loss{2.1, 1.4, 1.1, 0.95};
//   PowerLawFit f = fit_power_law(n, loss);   // f.alpha, f.c (the floor), f.a
//   f.at(3e5);                                // the fitted curve at x = 3e5
//   Interval ci = percentile_interval(alphas_of_replicates, 0.95);
//   BootstrapFit b = bootstrap_power_law(n, draw_losses, 400, gen);   // fit + 95% intervals
//
// How the fit works (variable projection). The model is nonlinear only in alpha: for a fixed
// alpha, with u_i = x_i^(-alpha), y = a u + c is a straight line in u, so a and c follow by
// linear least squares (experiments/common/least_squares.h). What is left is a function of one
// number, RSS(alpha) = min over (a, c) of sum_i (y_i - a u_i - c)^2, minimised by a grid over
// (0, alpha_max] and golden-section refinement around the best grid point. The residuals are in
// the units of y (nats), every point weighted alike. The floor is kept at c >= 0 (a loss cannot
// be negative): when the free line puts c below 0, c = 0 and a = sum(u y) / sum(u^2).
//
// Why not fit a straight line to log y against log x: with a floor c the log-log plot bends
// (it flattens towards c), and a slope read from it mixes alpha with the floor. For a fixed c,
// log(y - c) = log a - alpha log x is a straight line, and the fit here agrees with it when the
// data follow the law exactly (tests/experiments/power_law_fit_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/generator.h"

namespace attn::experiments {

struct PowerLawFit {
  double a = 0, alpha = 0, c = 0;
  double rss = 0;          // sum of squared residuals at the optimum
  double rms = 0;          // sqrt(rss / n)
  bool c_clamped = false;  // the best free c was negative, so c = 0
  double at(double x) const;
};

// Throws attn::Error for fewer than 3 points, sizes that differ, or an x <= 0 or non-finite
// value. x is rescaled by its geometric mean inside, so its units do not matter.
PowerLawFit fit_power_law(const std::vector<double>& x,
                          const std::vector<double>& y,
                          double alpha_max = 4.0);

struct Interval {
  double lo = 0, hi = 0;
};

// The central `level` interval of samples (e.g. 0.95: the 2.5th and 97.5th percentiles, with
// linear interpolation between order statistics). Throws attn::Error for no samples.
Interval percentile_interval(std::vector<double> samples, double level = 0.95);

// A fit with bootstrap intervals. draw(nullptr) returns the measured y; draw(&gen) returns one
// bootstrap replicate of y (the caller decides what is resampled: seeds, evaluation batches).
// Every replicate is refitted; the intervals are the central `level` percentiles of the
// replicates' alpha and c (the percentile bootstrap).
struct BootstrapFit {
  PowerLawFit fit;             // on the measured y
  Interval alpha, c;           // percentile intervals over the replicates
  std::vector<double> alphas;  // every replicate's alpha
  double r_squared = 0;        // 1 - RSS / (sum of squares about the mean of y)
};
BootstrapFit bootstrap_power_law(const std::vector<double>& x,
                                 const std::function<std::vector<double>(Generator*)>& draw,
                                 int64_t replicates,
                                 Generator& gen,
                                 double level = 0.95);

}  // namespace attn::experiments
