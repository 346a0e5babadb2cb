// SoftmaxOp: y = softmax(x) over the last axis (a fused kernel).
#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

struct SoftmaxOp final : Op {
  Tensor y;  // saved output: the derivative is expressed through y alone

  // x (...,C) -> y (...,C);  y_i = exp(x_i - m) / sum_j exp(x_j - m),  m = max_j x_j.
  // Subtracting the row max changes nothing mathematically and keeps exp() from overflowing.
  // One row is kernels::softmax_row (vectorised exp; a -inf or lowest() score gets weight 0).
  Tensor forward(const Tensor& x) {
    if (x.rank() == 0) throw Error("softmax: needs rank >= 1, got a scalar");
    const int64_t c = x.shape().back(), rows = x.numel() / std::max<int64_t>(c, 1);
    y = Tensor::empty(x.shape());
    const real* px = x.data();
    real* py = y.data();
    kernels::parallel_for(rows, c * 4,
                          [&](int64_t r) { kernels::softmax_row(px + r * c, py + r * c, c); });
    return y;
  }

  // dy_i/dx_j = y_i (delta_ij - y_j), so dx_j = y_j (dy_j - sum_i dy_i y_i).
  void backward() override {
    const int64_t c = y.shape().back(), rows = y.numel() / std::max<int64_t>(c, 1);
    Tensor dx = Tensor::empty(y.shape());
    const real* py = y.data();
    const real* pg = dy().data();
    real* pd = dx.data();
    kernels::parallel_for(rows, c * 3, [&](int64_t r) {
      kernels::softmax_backward_row(py + r * c, pg + r * c, pd + r * c, c);
    });
    accumulate(0, dx);
  }

  const char* name() const override { return "softmax"; }
};

Var softmax(const Var& x) {
  auto op = std::make_unique<SoftmaxOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
