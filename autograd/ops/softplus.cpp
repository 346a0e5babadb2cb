// SoftplusOp: y = log(1 + e^x), a smooth ReLU that is always > 0 (the S6 layer's step size
// Delta = softplus(dt_proj(x)), nn/ssm/selective_ssm.h).
#include <cmath>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct SoftplusOp final : Op {
  Tensor x;  // saved input

  // x (...) -> y (...);  y = log(1 + e^x) written as max(x, 0) + log1p(e^-|x|): e^-|x| <= 1,
  // so nothing overflows (the naive form gives inf for x > 88 in float) and log1p keeps the
  // digits of a tiny e^-|x|. PyTorch returns x itself above its threshold 20; the two differ by
  // less than e^-20 = 2e-9 there.
  Tensor forward(const Tensor& x_in) {
    x = x_in;
    return kernels::map(
        x, [](real v) { return (v > 0 ? v : real(0)) + std::log1p(std::exp(-std::abs(v))); },
        kernels::kCostTranscendental);
  }

  // dy/dx = e^x / (1 + e^x) = sigmoid(x):  dx = dy * sigmoid(x).
  void backward() override {
    accumulate(0, kernels::zip(
                      dy(), x, [](real g, real v) { return g * kernels::stable_sigmoid(v); },
                      kernels::kCostTranscendental));
  }

  const char* name() const override { return "softplus"; }
};

Var softplus(const Var& x) {
  auto op = std::make_unique<SoftplusOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
