// MulOp: y = a * b (elementwise) with numpy broadcasting.
#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"

namespace attn {

struct MulOp final : Op {
  Tensor a, b;  // saved operands: each one's gradient needs the other

  // a (...), b (...) broadcastable -> y (broadcast shape);  y = a * b
  Tensor forward(const Tensor& a_in, const Tensor& b_in) {
    a = a_in, b = b_in;
    return kernels::broadcast_binary(a, b, "mul", [](real x, real y) { return x * y; });
  }

  // dy/da = b and dy/db = a:  da = sum_to(a.shape, dy * b),  db = sum_to(b.shape, dy * a).
  void backward() override {
    auto times = [](real x, real y) { return x * y; };
    if (needs_grad(0))
      accumulate(
          0, kernels::sum_to_shape(kernels::broadcast_binary(dy(), b, "mul", times), a.shape()));
    if (needs_grad(1))
      accumulate(
          1, kernels::sum_to_shape(kernels::broadcast_binary(dy(), a, "mul", times), b.shape()));
  }

  const char* name() const override { return "mul"; }
};

Var mul(const Var& a, const Var& b) {
  auto op = std::make_unique<MulOp>();
  Tensor y = op->forward(a.value(), b.value());
  return record(std::move(op), {a, b}, std::move(y));
}

}  // namespace attn
