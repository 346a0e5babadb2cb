// SqrtOp: y = sqrt(x).
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct SqrtOp final : Op {
  Tensor y;  // saved output: the derivative is 1 / (2 sqrt(x)) = 1 / (2y)

  // x (...) -> y (...);  y = sqrt(x)  (x < 0 gives nan, as in PyTorch)
  Tensor forward(const Tensor& x) {
    y = kernels::map(
        x, [](real v) { return std::sqrt(v); }, kernels::kCostTranscendental);
    return y;
  }

  // dy/dx = 1 / (2 sqrt(x)) = 1 / (2y):  dx = dy / (2y)  (infinite at x = 0, like PyTorch).
  void backward() override {
    accumulate(0, kernels::zip(dy(), y, [](real g, real r) { return g / (2 * r); }));
  }

  const char* name() const override { return "sqrt"; }
};

Var sqrt(const Var& x) {
  auto op = std::make_unique<SqrtOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
