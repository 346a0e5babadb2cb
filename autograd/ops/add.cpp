// AddOp: y = a + b with numpy broadcasting.
#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"

namespace attn {

struct AddOp final : Op {
  Shape a_shape, b_shape;

  // a (...), b (...) broadcastable -> y (broadcast shape);  y = a + b
  Tensor forward(const Tensor& a, const Tensor& b) {
    a_shape = a.shape();
    b_shape = b.shape();
    return kernels::broadcast_binary(a, b, "add", [](real x, real y) { return x + y; });
  }

  // dy/da = dy/db = 1, so da = dy and db = dy, each summed over the axes broadcasting expanded.
  void backward() override {
    if (needs_grad(0)) accumulate(0, kernels::sum_to_shape(dy(), a_shape));
    if (needs_grad(1)) accumulate(1, kernels::sum_to_shape(dy(), b_shape));
  }

  const char* name() const override { return "add"; }
};

Var add(const Var& a, const Var& b) {
  auto op = std::make_unique<AddOp>();
  Tensor y = op->forward(a.value(), b.value());
  return record(std::move(op), {a, b}, std::move(y));
}

}  // namespace attn
