#include "experiments/basics/softmax_numerics.h"

#include <cmath>
#include <functional>
#include <limits>

#include "autograd/functional.h"
#include "autograd/mode.h"
#include "autograd/tensor.h"
#include "autograd/var.h"

namespace attn::experiments {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The row x_j = s (2j / (n - 1) - 1) as float32, shape (1, n).
Tensor spread_row(int64_t n, double s) {
  Tensor x({1, n});
  for (int64_t j = 0; j < n; ++j)
    x[j] = static_cast<real>(s * (2.0 * static_cast<double>(j) / static_cast<double>(n - 1) - 1));
  return x;
}

// The exact answers in double, from the float logits as stored: y_j = x_j - lse and the
// gradient of sum_j y_j, 1 - n p_j.
struct Exact {
  std::vector<double> y, grad;
};

Exact exact_log_softmax(const Tensor& x) {
  const int64_t n = x.numel();
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, static_cast<double>(x[j]));
  double z = 0;
  for (int64_t j = 0; j < n; ++j) z += std::exp(static_cast<double>(x[j]) - m);
  const double lse = m + std::log(z);
  Exact e;
  for (int64_t j = 0; j < n; ++j) {
    const double y = static_cast<double>(x[j]) - lse;
    e.y.push_back(y);
    e.grad.push_back(1 - static_cast<double>(n) * std::exp(y));
  }
  return e;
}

// max |a - b| over the row, or NaN when some entry of a is not finite.
double max_error(const Tensor& a, const std::vector<double>& b) {
  double worst = 0;
  for (int64_t j = 0; j < a.numel(); ++j) {
    const double v = static_cast<double>(a[j]);
    if (!std::isfinite(v)) return kNaN;
    worst = std::max(worst, std::abs(v - b[static_cast<size_t>(j)]));
  }
  return worst;
}

using Form = std::function<Var(const Var&)>;

void measure(const Form& form, const Tensor& x, const Exact& exact, LogSoftmaxForm& out, double s) {
  Var xv = Var::parameter(x, "logits");
  const Var y = form(xv);
  const double value_error = max_error(y.value(), exact.y);
  sum(y).backward();
  const double grad_error = max_error(xv.grad(), exact.grad);
  out.value_error.push_back(value_error);
  out.grad_error.push_back(grad_error);
  if (std::isnan(value_error) && out.first_bad_value == 0) out.first_bad_value = s;
  if (std::isnan(grad_error) && out.first_bad_grad == 0) out.first_bad_grad = s;
  if (!std::isnan(value_error))
    out.largest_finite_error = std::max(out.largest_finite_error, value_error);
}

}  // namespace

LogSoftmaxSweep log_softmax_sweep(const LogSoftmaxSweepSettings& s) {
  LogSoftmaxSweep sweep;
  sweep.forms = {{.name = "log_softmax(x)", .key = "direct"},
                 {.name = "log(softmax(x))", .key = "log_of_softmax"},
                 {.name = "log(exp(x) / sum exp(x))", .key = "log_of_exp_ratio"}};
  // The three ways, each from the project's ops on the tape.
  const Form forms[3] = {[](const Var& x) { return log_softmax(x); },
                         [](const Var& x) { return log(softmax(x)); },
                         [](const Var& x) {
                           const Var e = exp(x);
                           return log(div(e, sum(e, 1, true)));
                         }};
  for (int k = 0;; ++k) {
    const double scale = std::exp2(static_cast<double>(k) / s.per_octave);
    if (scale > s.max_scale) break;
    sweep.scales.push_back(scale);
    const Tensor x = spread_row(s.classes, scale);
    const Exact exact = exact_log_softmax(x);
    for (int f = 0; f < 3; ++f) measure(forms[f], x, exact, sweep.forms[f], scale);
  }
  return sweep;
}

namespace {

// Scores (1, n): the first n - masked spread over [lo, hi], the masked rest 0 (they are filled).
Tensor scores_row(int64_t n, int64_t masked, double lo, double hi) {
  Tensor x = Tensor::zeros({1, n});
  const int64_t visible = n - masked;
  for (int64_t j = 0; j < visible; ++j) {
    const double t = visible > 1 ? static_cast<double>(j) / static_cast<double>(visible - 1) : 1;
    x[j] = static_cast<real>(lo + t * (hi - lo));
  }
  return x;
}

// masked_fill then softmax, as the attention of 004 §3.1 does; the weight of the last position.
double masked_weight(const Tensor& scores, const Tensor& mask, double fill) {
  NoGrad off;
  const Tensor w =
      softmax(masked_fill(Var::constant(scores), mask, static_cast<real>(fill))).value();
  return static_cast<double>(w[w.numel() - 1]);
}

}  // namespace

std::vector<MaskFill> mask_fill_table(int64_t n,
                                      int64_t masked,
                                      const std::vector<double>& scales) {
  const double inf = std::numeric_limits<real>::infinity();
  std::vector<MaskFill> fills = {{.name = "-1e4", .key = "fill_1e4", .value = -1e4},
                                 {.name = "-1e9", .key = "fill_1e9", .value = -1e9},
                                 {.name = "float32 lowest",
                                  .key = "fill_lowest",
                                  .value = std::numeric_limits<real>::lowest()},
                                 {.name = "-inf", .key = "fill_inf", .value = -inf}};
  Tensor mask = Tensor::zeros({1, n}), all = Tensor::zeros({1, n});
  for (int64_t j = 0; j < n; ++j) {
    mask[j] = j >= n - masked ? 1 : 0;
    all[j] = 1;
  }
  for (MaskFill& f : fills) {
    for (double s : scales) {
      const double c = masked_weight(scores_row(n, masked, -s, s), mask, f.value);
      const double g = masked_weight(scores_row(n, masked, -s, -s / 2), mask, f.value);
      f.centred.push_back(c);
      f.negative.push_back(g);
      if (c != 0) f.leaks_centred = true;
      if (g != 0 && f.first_leak_negative == 0) f.first_leak_negative = s;
    }
    f.fully_masked = masked_weight(scores_row(n, masked, -1, 1), all, f.value);
  }
  return fills;
}

}  // namespace attn::experiments
