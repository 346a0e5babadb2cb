// AbsOp: y = |x|.
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct AbsOp final : Op {
  Tensor x;  // saved input: the derivative is its sign

  // x (...) -> y (...);  y = |x|
  Tensor forward(const Tensor& x_in) {
    x = x_in;
    return kernels::map(x, [](real v) { return std::abs(v); });
  }

  // dy/dx = sign(x), taken as 0 at the kink x = 0 (PyTorch's choice):  dx = dy * sign(x).
  void backward() override {
    accumulate(0, kernels::zip(dy(), x, [](real g, real v) {
                 return v > 0 ? g : v < 0 ? -g : real(0);
               }));
  }

  const char* name() const override { return "abs"; }
};

Var abs(const Var& x) {
  auto op = std::make_unique<AbsOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
