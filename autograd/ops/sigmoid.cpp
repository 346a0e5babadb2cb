// SigmoidOp: y = 1 / (1 + e^-x), computed without overflow for large |x|.
#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct SigmoidOp final : Op {
  Tensor y;  // saved output: the derivative is expressed through y alone

  // x (...) -> y (...);  y = 1 / (1 + e^-x). For x < 0 the equal form e^x / (1 + e^x) is used,
  // so exp only ever sees a non-positive argument and no intermediate overflows to inf (the
  // naive form computes e^1000 = inf at x = -1000; IEEE rounds 1/inf to the right 0, but an inf
  // in flight breaks under floating-point traps or -ffast-math).
  Tensor forward(const Tensor& x) {
    y = kernels::map(x, kernels::stable_sigmoid, kernels::kCostTranscendental);
    return y;
  }

  // dy/dx = sigmoid(x) (1 - sigmoid(x)) = y (1 - y):  dx = dy * y * (1 - y).
  void backward() override {
    accumulate(0, kernels::zip(dy(), y, [](real g, real s) { return g * s * (1 - s); }));
  }

  const char* name() const override { return "sigmoid"; }
};

Var sigmoid(const Var& x) {
  auto op = std::make_unique<SigmoidOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
