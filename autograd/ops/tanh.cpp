// TanhOp: y = tanh(x).
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct TanhOp final : Op {
  Tensor y;  // saved output: the derivative is expressed through y alone

  // x (...) -> y (...);  y = tanh(x) = (e^x - e^-x) / (e^x + e^-x)
  Tensor forward(const Tensor& x) {
    y = kernels::map(
        x, [](real v) { return std::tanh(v); }, kernels::kCostTranscendental);
    return y;
  }

  // dy/dx = 1 - tanh(x)^2 = 1 - y^2:  dx = dy * (1 - y^2).
  void backward() override {
    accumulate(0, kernels::zip(dy(), y, [](real g, real t) { return g * (1 - t * t); }));
  }

  const char* name() const override { return "tanh"; }
};

Var tanh(const Var& x) {
  auto op = std::make_unique<TanhOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
