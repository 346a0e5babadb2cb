// LayerNormOp: normalise each row over the last axis, then scale and shift (a fused kernel).
#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct LayerNormOp final : Op {
  Tensor x, w;        // saved input and weight
  Tensor mean, rstd;  // per row (R): the row mean and 1 / sqrt(var + eps)
  int64_t rows = 0, c = 0;

  // x (...,C), w (C), b (C) -> y (...,C). Per row: mu = mean_j x_j,
  // var = mean_j (x_j - mu)^2 (biased, as PyTorch), rstd = 1/sqrt(var + eps),
  // xhat_j = (x_j - mu) * rstd,  y_j = xhat_j * w_j + b_j.
  Tensor forward(const Tensor& x_in, const Tensor& w_in, const Tensor& b, real eps) {
    if (x_in.rank() == 0 || w_in.shape() != Shape{x_in.shape().back()} || b.shape() != w_in.shape())
      throw Error(fmt::format(
          "layer_norm: expected x (...,C) with weight (C) and bias (C), got x {}, weight {}, bias "
          "{}",
          shape_str(x_in.shape()), shape_str(w_in.shape()), shape_str(b.shape())));
    x = x_in, w = w_in;
    c = x.shape().back();
    rows = c == 0 ? 0 : x.numel() / c;
    mean = Tensor::empty({rows});
    rstd = Tensor::empty({rows});
    Tensor y = Tensor::empty(x.shape());
    const real *px = x.data(), *pw = w.data(), *pb = b.data();
    real *py = y.data(), *pm = mean.data(), *ps = rstd.data();
    kernels::parallel_for(rows, c * 6, [&](int64_t r) {
      const real* xr = px + r * c;
      real mu = 0, var = 0;
      for (int64_t j = 0; j < c; ++j) mu += xr[j];
      mu /= static_cast<real>(c);
      for (int64_t j = 0; j < c; ++j) var += (xr[j] - mu) * (xr[j] - mu);  // two passes: no
      var /= static_cast<real>(c);  // cancellation from E[x^2] - E[x]^2
      const real s = 1 / std::sqrt(var + eps);
      pm[r] = mu, ps[r] = s;
      for (int64_t j = 0; j < c; ++j) py[r * c + j] = (xr[j] - mu) * s * pw[j] + pb[j];
    });
    return y;
  }

  // With g = dy * w (the gradient reaching xhat), per row:
  //   dx_j = rstd * (g_j - mean_k g_k - xhat_j * mean_k (g_k xhat_k))
  // (the two means are the paths through mu and through rstd). Over all rows:
  //   dw_j = sum_rows dy_j xhat_j,   db_j = sum_rows dy_j.
  void backward() override {
    const real *px = x.data(), *pw = w.data(), *pg = dy().data();
    const real *pm = mean.data(), *ps = rstd.data();
    if (needs_grad(0)) {
      Tensor dx = Tensor::empty(x.shape());
      real* pd = dx.data();
      kernels::parallel_for(rows, c * 8, [&](int64_t r) {
        const real *xr = px + r * c, *gr = pg + r * c;
        real mean_g = 0, mean_gx = 0;
        for (int64_t j = 0; j < c; ++j) {
          const real g = gr[j] * pw[j];
          mean_g += g;
          mean_gx += g * (xr[j] - pm[r]) * ps[r];
        }
        mean_g /= static_cast<real>(c);
        mean_gx /= static_cast<real>(c);
        for (int64_t j = 0; j < c; ++j) {
          const real xhat = (xr[j] - pm[r]) * ps[r];
          pd[r * c + j] = ps[r] * (gr[j] * pw[j] - mean_g - xhat * mean_gx);
        }
      });
      accumulate(0, dx);
    }
    if (needs_grad(1) || needs_grad(2)) {
      Tensor dw({c}), db({c});
      real *pdw = dw.data(), *pdb = db.data();
      // One column per task: each task owns dw_j and db_j, so no two threads write one sum.
      kernels::parallel_for(c, rows * 3, [&](int64_t j) {
        for (int64_t r = 0; r < rows; ++r) {
          pdw[j] += pg[r * c + j] * (px[r * c + j] - pm[r]) * ps[r];
          pdb[j] += pg[r * c + j];
        }
      });
      accumulate(1, dw);
      accumulate(2, db);
    }
  }

  const char* name() const override { return "layer_norm"; }
};

Var layer_norm(const Var& x, const Var& weight, const Var& bias, real eps) {
  auto op = std::make_unique<LayerNormOp>();
  Tensor y = op->forward(x.value(), weight.value(), bias.value(), eps);
  return record(std::move(op), {x, weight, bias}, std::move(y));
}

}  // namespace attn
