// MulScalarOp: y = s * x for a constant s.
#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct MulScalarOp final : Op {
  real s = 1;

  // x (...) -> y (...);  y = s * x
  Tensor forward(const Tensor& x, real scale) {
    s = scale;
    return kernels::map(x, [scale](real v) { return scale * v; });
  }

  // dy/dx = s:  dx = s * dy.
  void backward() override {
    accumulate(0, kernels::map(dy(), [this](real g) { return s * g; }));
  }

  const char* name() const override { return "mul_scalar"; }
};

Var mul_scalar(const Var& x, real s) {
  auto op = std::make_unique<MulScalarOp>();
  Tensor y = op->forward(x.value(), s);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
