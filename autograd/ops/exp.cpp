// ExpOp: y = e^x.
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct ExpOp final : Op {
  Tensor y;  // saved output: exp is its own derivative

  // x (...) -> y (...);  y = e^x
  Tensor forward(const Tensor& x) {
    y = kernels::map(
        x, [](real v) { return std::exp(v); }, kernels::kCostTranscendental);
    return y;
  }

  // dy/dx = e^x = y:  dx = dy * y.
  void backward() override {
    accumulate(0, kernels::zip(dy(), y, [](real g, real e) { return g * e; }));
  }

  const char* name() const override { return "exp"; }
};

Var exp(const Var& x) {
  auto op = std::make_unique<ExpOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
