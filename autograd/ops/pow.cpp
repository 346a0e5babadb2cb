// PowOp: y = x^p for a constant exponent p.
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct PowOp final : Op {
  Tensor x;  // saved input
  real p = 1;

  // x (...) -> y (...);  y = x^p  (a negative x with a fractional p gives nan, as in PyTorch)
  Tensor forward(const Tensor& x_in, real exponent) {
    x = x_in, p = exponent;
    return kernels::map(
        x, [exponent](real v) { return std::pow(v, exponent); }, kernels::kCostTranscendental);
  }

  // dy/dx = p x^(p-1):  dx = dy * p * x^(p-1).
  // For p = 0 the function is constant and dx = 0 everywhere (x^-1 at x = 0 would give 0 * inf =
  // nan otherwise); PyTorch makes the same special case.
  void backward() override {
    if (p == 0) {
      accumulate(0, Tensor::zeros(x.shape()));
      return;
    }
    accumulate(0, kernels::zip(
                      dy(), x, [this](real g, real v) { return g * p * std::pow(v, p - 1); },
                      kernels::kCostTranscendental));
  }

  const char* name() const override { return "pow"; }
};

Var pow(const Var& x, real p) {
  auto op = std::make_unique<PowOp>();
  Tensor y = op->forward(x.value(), p);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
