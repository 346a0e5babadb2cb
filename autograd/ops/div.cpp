// DivOp: y = a / b (elementwise) with numpy broadcasting.
#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"

namespace attn {

struct DivOp final : Op {
  Tensor a, b;  // saved operands: da needs b, db needs a and b

  // a (...), b (...) broadcastable -> y (broadcast shape);  y = a / b  (b = 0 gives inf/nan,
  // as in IEEE arithmetic and PyTorch)
  Tensor forward(const Tensor& a_in, const Tensor& b_in) {
    a = a_in, b = b_in;
    return kernels::broadcast_binary(a, b, "div", [](real x, real y) { return x / y; });
  }

  // dy/da = 1/b and dy/db = -a/b^2:
  //   da = sum_to(a.shape, dy / b),   db = sum_to(b.shape, -dy * a / b^2).
  // db takes two passes over the output shape: g_a = -dy * a, then g_a / b^2.
  void backward() override {
    auto over = [](real x, real y) { return x / y; };
    if (needs_grad(0))
      accumulate(0,
                 kernels::sum_to_shape(kernels::broadcast_binary(dy(), b, "div", over), a.shape()));
    if (needs_grad(1)) {
      const Tensor g_a =
          kernels::broadcast_binary(dy(), a, "div", [](real g, real x) { return -g * x; });
      const Tensor db =
          kernels::broadcast_binary(g_a, b, "div", [](real ga, real y) { return ga / (y * y); });
      accumulate(1, kernels::sum_to_shape(db, b.shape()));
    }
  }

  const char* name() const override { return "div"; }
};

Var div(const Var& a, const Var& b) {
  auto op = std::make_unique<DivOp>();
  Tensor y = op->forward(a.value(), b.value());
  return record(std::move(op), {a, b}, std::move(y));
}

}  // namespace attn
