// LogSoftmaxOp: y = log(softmax(x)) over the last axis, computed without forming softmax.
#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/log_sum_exp.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

struct LogSoftmaxOp final : Op {
  Tensor y;  // saved output: softmax = exp(y) is all backward needs

  // x (...,C) -> y (...,C);  y_i = x_i - lse,  lse = log sum_j exp(x_j), taken with the row
  // max subtracted (kernels/log_sum_exp.h) so it never overflows. Unlike log(softmax(x)) in
  // two steps, a tiny probability stays a finite negative number instead of log(0) = -inf.
  Tensor forward(const Tensor& x) {
    if (x.rank() == 0) throw Error("log_softmax: needs rank >= 1, got a scalar");
    const int64_t c = x.shape().back(), rows = x.numel() / std::max<int64_t>(c, 1);
    y = Tensor::empty(x.shape());
    const real* px = x.data();
    real* py = y.data();
    kernels::parallel_for(rows, c * 4, [&](int64_t r) {
      const real lse = kernels::log_sum_exp(px + r * c, c);
      for (int64_t j = 0; j < c; ++j) py[r * c + j] = px[r * c + j] - lse;
    });
    return y;
  }

  // dy_i/dx_j = delta_ij - softmax_j, so dx_j = dy_j - softmax_j * sum_i dy_i,
  // with softmax_j = exp(y_j).
  void backward() override {
    const int64_t c = y.shape().back(), rows = y.numel() / std::max<int64_t>(c, 1);
    Tensor dx = Tensor::empty(y.shape());
    const real* py = y.data();
    const real* pg = dy().data();
    real* pd = dx.data();
    kernels::parallel_for(rows, c * 3, [&](int64_t r) {
      kernels::log_softmax_backward_row(py + r * c, pg + r * c, pd + r * c, c);
    });
    accumulate(0, dx);
  }

  const char* name() const override { return "log_softmax"; }
};

Var log_softmax(const Var& x) {
  auto op = std::make_unique<LogSoftmaxOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
