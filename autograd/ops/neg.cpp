// NegOp: y = -x.
#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct NegOp final : Op {
  // x (...) -> y (...);  y = -x
  Tensor forward(const Tensor& x) {
    return kernels::map(x, [](real v) { return -v; });
  }

  // dy/dx = -1:  dx = -dy.
  void backward() override {
    accumulate(0, kernels::map(dy(), [](real g) { return -g; }));
  }

  const char* name() const override { return "neg"; }
};

Var neg(const Var& x) {
  auto op = std::make_unique<NegOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
