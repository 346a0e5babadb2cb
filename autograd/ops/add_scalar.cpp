// AddScalarOp: y = x + s for a constant s.
#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct AddScalarOp final : Op {
  // x (...) -> y (...);  y = x + s
  Tensor forward(const Tensor& x, real s) {
    return kernels::map(x, [s](real v) { return v + s; });
  }

  // dy/dx = 1:  dx = dy (accumulate copies it, since dy's buffer stays with the output).
  void backward() override { accumulate(0, dy()); }

  const char* name() const override { return "add_scalar"; }
};

Var add_scalar(const Var& x, real s) {
  auto op = std::make_unique<AddScalarOp>();
  Tensor y = op->forward(x.value(), s);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
