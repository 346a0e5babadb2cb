// Compiled without floating-point trap semantics so the vexp loops vectorise (see the header).
#pragma GCC optimize("no-trapping-math")

#include "autograd/kernels/vec_math.h"

#include <numbers>

namespace attn::kernels {

void vexp_n(const real* x, real* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = vexp(x[j]);
}

void vtanh_n(const real* x, real* y, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = vtanh(x[j]);
}

namespace {

real row_max(const real* x, int64_t c) {
  real m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < c; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

real row_sum(const real* x, int64_t c) {
  real total = 0;
#pragma omp simd reduction(+ : total)
  for (int64_t j = 0; j < c; ++j) total += x[j];
  return total;
}

}  // namespace

void softmax_row(const real* x, real* y, int64_t c) {
  const real m = row_max(x, c);
  real total = 0;
#pragma omp simd reduction(+ : total)
  for (int64_t j = 0; j < c; ++j) {
    y[j] = vexp(x[j] - m);
    total += y[j];
  }
  const real inv = 1 / total;
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) y[j] *= inv;
}

void softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c) {
  real dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < c; ++j) dot += dy[j] * y[j];
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) dx[j] = y[j] * (dy[j] - dot);
}

real log_sum_exp_row(const real* x, int64_t c) {
  const real m = row_max(x, c);
  real total = 0;
#pragma omp simd reduction(+ : total)
  for (int64_t j = 0; j < c; ++j) total += vexp(x[j] - m);
  return m + std::log(total);
}

void exp_shift_row(const real* x, real shift, real scale, real offset, real* y, int64_t c) {
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) y[j] = scale * (vexp(x[j] - shift) - offset);
}

void log_softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c) {
  const real total = row_sum(dy, c);
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) dx[j] = dy[j] - vexp(y[j]) * total;
}

// ---- GELU ------------------------------------------------------------------------------------

namespace {

constexpr real kInvSqrt2 = real(1 / std::numbers::sqrt2);
constexpr real kInvSqrt2Pi = real(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
constexpr real kSqrt2OverPi = real(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
constexpr real kCubic = real(0.044715);  // the cubic coefficient of the tanh approximation

// Phi(x) ~ (1 + tanh u) / 2 = sigmoid(2u) = 1 / (1 + e^(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3).
// One exp instead of a tanh; e^(-2u) overflowing to inf gives exactly 0, so no branch is needed.
inline real tanh_form_cdf(real x) {
  const real u = kSqrt2OverPi * (x + kCubic * x * x * x);
  return 1 / (1 + vexp(-2 * u));
}

}  // namespace

// Exact: y = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.  Tanh form: y = x sigmoid(2u).
void gelu_n(const real* x, real* y, int64_t n, bool tanh_form) {
  if (tanh_form) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] * tanh_form_cdf(x[j]);
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = real(0.5) * x[j] * (1 + verf(x[j] * kInvSqrt2));
  }
}

// Exact: d/dx [x Phi(x)] = Phi(x) + x phi(x),  phi(x) = e^(-x^2/2) / sqrt(2 pi).
// Tanh form: d/dx [x s] = s + 2 x s (1 - s) u',  s = sigmoid(2u),  u' = sqrt(2/pi) (1 + 3 c x^2)
// (the same as (1 + t)/2 + x (1 - t^2) u'/2 written with t = tanh u = 2s - 1).
// Phi(x) (or s) is read back from the forward's output as y / x instead of being recomputed:
// one division instead of an erf (or an exp). Near 0, where y / x loses its digits, both are
// 1/2 + x / sqrt(2 pi) to within x^3 / 15 (below 1e-13 for |x| < 1e-4).
void gelu_backward_n(
    const real* x, const real* y, const real* dy, real* dx, int64_t n, bool tanh_form) {
  constexpr real kSmall = real(1e-4);
  if (tanh_form) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      const real v = x[j];
      const bool small = v < kSmall && v > -kSmall;
      const real s = small ? real(0.5) + v * kInvSqrt2Pi : y[j] / (small ? real(1) : v);
      const real du = kSqrt2OverPi * (1 + 3 * kCubic * v * v);
      dx[j] = dy[j] * (s + 2 * v * s * (1 - s) * du);
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      const real v = x[j];
      const bool small = v < kSmall && v > -kSmall;
      const real cdf = small ? real(0.5) + v * kInvSqrt2Pi : y[j] / (small ? real(1) : v);
      dx[j] = dy[j] * (cdf + v * kInvSqrt2Pi * vexp(real(-0.5) * v * v));
    }
  }
}

}  // namespace attn::kernels
