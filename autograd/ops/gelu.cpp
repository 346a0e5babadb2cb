// GeluOp: y = x * Phi(x), exactly (erf) or with PyTorch's tanh approximation.

#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

struct GeluOp final : Op {
  Tensor x, y;  // saved input and output (Phi(x) = y / x in backward)
  GeluApprox approx = GeluApprox::kNone;

  // x (...) -> y (...);  y = x Phi(x), Phi the standard normal CDF (kNone, via erf), or
  // y = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2 (kTanh), matching
  // torch.nn.functional.gelu(x, approximate='none' | 'tanh'). The loops are kernels::gelu_n
  // (kernels/gelu.cpp: a vectorised erf/exp in the float build, libm in the double build).
  Tensor forward(const Tensor& x_in, GeluApprox mode) {
    x = x_in, approx = mode;
    y = Tensor::empty(x.shape());
    const real* px = x.data();
    real* py = y.data();
    const bool tanh_form = approx == GeluApprox::kTanh;
    kernels::parallel_chunks(
        x.numel(), 8, [&](int64_t b, int64_t n) { kernels::gelu_n(px + b, py + b, n, tanh_form); });
    return y;
  }

  // Exact: dy/dx = Phi(x) + x phi(x).  Tanh form: dy/dx = s + 2 x s (1 - s) u', s = sigmoid(2u).
  // dx = dy * dy/dx (kernels::gelu_backward_n, which takes Phi(x), or s, as y / x).
  void backward() override {
    Tensor dx = Tensor::empty(x.shape());
    const real* px = x.data();
    const real* py = y.data();
    const real* pg = dy().data();
    real* pd = dx.data();
    const bool tanh_form = approx == GeluApprox::kTanh;
    kernels::parallel_chunks(x.numel(), 8, [&](int64_t b, int64_t n) {
      kernels::gelu_backward_n(px + b, py + b, pg + b, pd + b, n, tanh_form);
    });
    accumulate(0, dx);
  }

  const char* name() const override { return "gelu"; }
};

Var gelu(const Var& x, GeluApprox approx) {
  auto op = std::make_unique<GeluOp>();
  Tensor y = op->forward(x.value(), approx);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
