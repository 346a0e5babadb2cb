// SiluOp: y = x * sigmoid(x) (also called swish).
#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct SiluOp final : Op {
  Tensor x;  // saved input

  // x (...) -> y (...);  y = x s(x),  s(x) = 1 / (1 + e^-x) computed without overflow
  Tensor forward(const Tensor& x_in) {
    x = x_in;
    return kernels::map(
        x, [](real v) { return v * kernels::stable_sigmoid(v); }, kernels::kCostTranscendental);
  }

  // dy/dx = s(x) + x s(x) (1 - s(x)) = s(x) (1 + x (1 - s(x))):  dx = dy * that.
  void backward() override {
    accumulate(0, kernels::zip(
                      dy(), x,
                      [](real g, real v) {
                        const real s = kernels::stable_sigmoid(v);
                        return g * s * (1 + v * (1 - s));
                      },
                      kernels::kCostTranscendental));
  }

  const char* name() const override { return "silu"; }
};

Var silu(const Var& x) {
  auto op = std::make_unique<SiluOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
