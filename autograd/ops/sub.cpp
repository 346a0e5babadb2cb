// SubOp: y = a - b with numpy broadcasting.
#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct SubOp final : Op {
  Shape a_shape, b_shape;

  // a (...), b (...) broadcastable -> y (broadcast shape);  y = a - b
  Tensor forward(const Tensor& a, const Tensor& b) {
    a_shape = a.shape();
    b_shape = b.shape();
    return kernels::broadcast_binary(a, b, "sub", [](real x, real y) { return x - y; });
  }

  // dy/da = 1 and dy/db = -1:  da = sum_to(a.shape, dy),  db = sum_to(b.shape, -dy), each summed
  // over the axes broadcasting expanded.
  void backward() override {
    if (needs_grad(0)) accumulate(0, kernels::sum_to_shape(dy(), a_shape));
    if (needs_grad(1))
      accumulate(1, kernels::sum_to_shape(kernels::map(dy(), [](real g) { return -g; }), b_shape));
  }

  const char* name() const override { return "sub"; }
};

Var sub(const Var& a, const Var& b) {
  auto op = std::make_unique<SubOp>();
  Tensor y = op->forward(a.value(), b.value());
  return record(std::move(op), {a, b}, std::move(y));
}

}  // namespace attn
