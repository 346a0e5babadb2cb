// EluOp: y = x for x > 0, alpha (e^x - 1) otherwise.
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct EluOp final : Op {
  Tensor x;  // saved input
  real alpha = 1;

  // x (...) -> y (...);  y = x if x > 0 else alpha (e^x - 1)  (expm1 keeps small |x| exact)
  Tensor forward(const Tensor& x_in, real a) {
    x = x_in, alpha = a;
    return kernels::map(
        x, [a](real v) { return v > 0 ? v : a * std::expm1(v); }, kernels::kCostTranscendental);
  }

  // dy/dx = 1 if x > 0 else alpha e^x:  dx = dy * that. (At x = 0 the two sides agree only for
  // alpha = 1; like PyTorch we take the left side there.)
  void backward() override {
    accumulate(0,
               kernels::zip(
                   dy(), x, [this](real g, real v) { return v > 0 ? g : g * alpha * std::exp(v); },
                   kernels::kCostTranscendental));
  }

  const char* name() const override { return "elu"; }
};

Var elu(const Var& x, real alpha) {
  auto op = std::make_unique<EluOp>();
  Tensor y = op->forward(x.value(), alpha);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
