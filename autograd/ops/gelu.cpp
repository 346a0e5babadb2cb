// GeluOp: y = x * Phi(x), exactly (erf) or with PyTorch's tanh approximation.
#include <cmath>
#include <numbers>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

namespace {

constexpr double kInvSqrt2 = 1 / std::numbers::sqrt2;                            // 1/sqrt(2)
constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;   // 1/sqrt(2 pi)
constexpr double kSqrt2OverPi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2/pi)
constexpr double kCubic = 0.044715;  // the cubic coefficient of the tanh approximation

// Exact: Phi(x) = (1 + erf(x / sqrt 2)) / 2, the standard normal CDF.
real gelu_exact(real x) {
  return real(0.5) * x * (1 + std::erf(x * real(kInvSqrt2)));
}
// d/dx [x Phi(x)] = Phi(x) + x phi(x),  phi(x) = e^(-x^2/2) / sqrt(2 pi).
real gelu_exact_grad(real x) {
  const real cdf = real(0.5) * (1 + std::erf(x * real(kInvSqrt2)));
  return cdf + x * real(kInvSqrt2Pi) * std::exp(real(-0.5) * x * x);
}

// Approximation: Phi(x) ~ (1 + tanh(u)) / 2 with u = sqrt(2/pi) (x + 0.044715 x^3).
// (1 + tanh u) / 2 equals sigmoid(2u), which costs one exp instead of a tanh (glibc's tanhf
// takes about three times as long) and agrees with PyTorch's tanh form to float rounding.
real gelu_tanh_u(real x) {
  return real(kSqrt2OverPi) * (x + real(kCubic) * x * x * x);
}
real gelu_tanh(real x) {
  return x * kernels::stable_sigmoid(2 * gelu_tanh_u(x));
}
// d/dx [x s] = s + 2 x s (1 - s) u',  s = sigmoid(2u),  u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
// (The same as (1 + t)/2 + x (1 - t^2) u'/2 written with t = tanh u = 2s - 1.)
real gelu_tanh_grad(real x) {
  const real s = kernels::stable_sigmoid(2 * gelu_tanh_u(x));
  const real du = real(kSqrt2OverPi) * (1 + 3 * real(kCubic) * x * x);
  return s + 2 * x * s * (1 - s) * du;
}

}  // namespace

struct GeluOp final : Op {
  Tensor x;  // saved input
  GeluApprox approx = GeluApprox::kNone;

  // x (...) -> y (...);  y = x Phi(x), Phi the standard normal CDF (kNone, via erf), or
  // y = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 (kTanh), matching
  // torch.nn.functional.gelu(x, approximate='none' | 'tanh').
  Tensor forward(const Tensor& x_in, GeluApprox mode) {
    x = x_in, approx = mode;
    return approx == GeluApprox::kTanh ? kernels::map(x, gelu_tanh, kernels::kCostTranscendental)
                                       : kernels::map(x, gelu_exact, kernels::kCostTranscendental);
  }

  // Exact: dy/dx = Phi(x) + x phi(x).  Tanh form: dy/dx = s + 2 x s (1 - s) u', s = sigmoid(2u).
  // dx = dy * dy/dx.
  void backward() override {
    real (*grad)(real) = approx == GeluApprox::kTanh ? gelu_tanh_grad : gelu_exact_grad;
    accumulate(0, kernels::zip(
                      dy(), x, [grad](real g, real v) { return g * grad(v); },
                      kernels::kCostTranscendental));
  }

  const char* name() const override { return "gelu"; }
};

Var gelu(const Var& x, GeluApprox approx) {
  auto op = std::make_unique<GeluOp>();
  Tensor y = op->forward(x.value(), approx);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
