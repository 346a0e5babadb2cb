// RmsNormOp: divide each row by its root mean square over the last axis, then scale.
#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct RmsNormOp final : Op {
  Tensor x, w;  // saved input and weight
  Tensor rstd;  // per row (R): 1 / sqrt(mean_j x_j^2 + eps)
  int64_t rows = 0, c = 0;

  // x (...,C), w (C) -> y (...,C). Per row: rstd = 1/sqrt(mean_j x_j^2 + eps),
  // xhat_j = x_j * rstd,  y_j = xhat_j * w_j. Unlike layer norm, no mean is subtracted
  // and there is no bias.
  Tensor forward(const Tensor& x_in, const Tensor& w_in, real eps) {
    if (x_in.rank() == 0 || w_in.shape() != Shape{x_in.shape().back()})
      throw Error(fmt::format("rms_norm: expected x (...,C) with weight (C), got x {}, weight {}",
                              shape_str(x_in.shape()), shape_str(w_in.shape())));
    x = x_in, w = w_in;
    c = x.shape().back();
    rows = c == 0 ? 0 : x.numel() / c;
    rstd = Tensor::empty({rows});
    Tensor y = Tensor::empty(x.shape());
    const real *px = x.data(), *pw = w.data();
    real *py = y.data(), *ps = rstd.data();
    kernels::parallel_for(rows, c * 4, [&](int64_t r) {
      const real* xr = px + r * c;
      real ms = 0;
      for (int64_t j = 0; j < c; ++j) ms += xr[j] * xr[j];
      const real s = 1 / std::sqrt(ms / static_cast<real>(c) + eps);
      ps[r] = s;
      for (int64_t j = 0; j < c; ++j) py[r * c + j] = xr[j] * s * pw[j];
    });
    return y;
  }

  // With g = dy * w, per row (d rstd / d x_k = -rstd^3 x_k / C):
  //   dx_j = rstd * (g_j - xhat_j * mean_k (g_k xhat_k)),
  // and over all rows dw_j = sum_rows dy_j xhat_j.
  void backward() override {
    const real *px = x.data(), *pw = w.data(), *pg = dy().data(), *ps = rstd.data();
    if (needs_grad(0)) {
      Tensor dx = Tensor::empty(x.shape());
      real* pd = dx.data();
      kernels::parallel_for(rows, c * 6, [&](int64_t r) {
        const real *xr = px + r * c, *gr = pg + r * c;
        real mean_gx = 0;
        for (int64_t j = 0; j < c; ++j) mean_gx += gr[j] * pw[j] * xr[j] * ps[r];
        mean_gx /= static_cast<real>(c);
        for (int64_t j = 0; j < c; ++j)
          pd[r * c + j] = ps[r] * (gr[j] * pw[j] - xr[j] * ps[r] * mean_gx);
      });
      accumulate(0, dx);
    }
    if (needs_grad(1)) {
      Tensor dw({c});
      real* pdw = dw.data();
      // One column per task, so each dw_j has a single writer.
      kernels::parallel_for(c, rows * 2, [&](int64_t j) {
        for (int64_t r = 0; r < rows; ++r) pdw[j] += pg[r * c + j] * px[r * c + j] * ps[r];
      });
      accumulate(1, dw);
    }
  }

  const char* name() const override { return "rms_norm"; }
};

Var rms_norm(const Var& x, const Var& weight, real eps) {
  auto op = std::make_unique<RmsNormOp>();
  Tensor y = op->forward(x.value(), weight.value(), eps);
  return record(std::move(op), {x, weight}, std::move(y));
}

}  // namespace attn
