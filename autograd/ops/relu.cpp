// ReluOp: y = max(x, 0).
#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct ReluOp final : Op {
  Tensor x;  // saved input: the derivative is the indicator x > 0

  // x (...) -> y (...);  y = max(x, 0)
  Tensor forward(const Tensor& x_in) {
    x = x_in;
    return kernels::map(x, [](real v) { return v > 0 ? v : real(0); });
  }

  // dy/dx = 1 where x > 0, else 0 (0 at the kink x = 0, as PyTorch):  dx = dy * [x > 0].
  void backward() override {
    accumulate(0, kernels::zip(dy(), x, [](real g, real v) { return v > 0 ? g : real(0); }));
  }

  const char* name() const override { return "relu"; }
};

Var relu(const Var& x) {
  auto op = std::make_unique<ReluOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
