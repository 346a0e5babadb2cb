// LogOp: y = ln x.
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct LogOp final : Op {
  Tensor x;  // saved input

  // x (...) -> y (...);  y = ln x  (x = 0 gives -inf and x < 0 gives nan, as in PyTorch)
  Tensor forward(const Tensor& x_in) {
    x = x_in;
    return kernels::map(
        x, [](real v) { return std::log(v); }, kernels::kCostTranscendental);
  }

  // dy/dx = 1/x:  dx = dy / x.
  void backward() override {
    accumulate(0, kernels::zip(dy(), x, [](real g, real v) { return g / v; }));
  }

  const char* name() const override { return "log"; }
};

Var log(const Var& x) {
  auto op = std::make_unique<LogOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
