// LayerNormOp: normalise each row over the last axis, then scale and shift (a fused kernel).
#include <fmt/format.h>

#include <algorithm>
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
      real* yr = py + r * c;
      real mu = 0, var = 0;
#pragma omp simd reduction(+ : mu)
      for (int64_t j = 0; j < c; ++j) mu += xr[j];
      mu /= static_cast<real>(c);
#pragma omp simd reduction(+ : var)
      for (int64_t j = 0; j < c; ++j) var += (xr[j] - mu) * (xr[j] - mu);  // two passes: no
      var /= static_cast<real>(c);  // cancellation from E[x^2] - E[x]^2
      const real s = 1 / std::sqrt(var + eps);
      pm[r] = mu, ps[r] = s;
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) yr[j] = (xr[j] - mu) * s * pw[j] + pb[j];
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
        real* dr = pd + r * c;
        const real mu = pm[r], s = ps[r];
        real mean_g = 0, mean_gx = 0;
#pragma omp simd reduction(+ : mean_g, mean_gx)
        for (int64_t j = 0; j < c; ++j) {
          const real g = gr[j] * pw[j];
          mean_g += g;
          mean_gx += g * (xr[j] - mu) * s;
        }
        mean_g /= static_cast<real>(c);
        mean_gx /= static_cast<real>(c);
#pragma omp simd
        for (int64_t j = 0; j < c; ++j) {
          const real xhat = (xr[j] - mu) * s;
          dr[j] = s * (gr[j] * pw[j] - mean_g - xhat * mean_gx);
        }
      });
      accumulate(0, dx);
    }
    if (needs_grad(1) || needs_grad(2)) {
      Tensor dw({c}), db({c});
      real *pdw = dw.data(), *pdb = db.data();
      // One block of kBlock columns per task: each task owns its dw_j and db_j (no two threads
      // write one sum) and walks the rows in memory order, the inner loop contiguous (a
      // column-at-a-time walk strides by C and reloads every cache line C/16 times).
      constexpr int64_t kBlock = 64;
      const int64_t blocks = (c + kBlock - 1) / kBlock;
      kernels::parallel_for(blocks, rows * kBlock * 3, [&](int64_t blk) {
        const int64_t j0 = blk * kBlock, j1 = std::min(c, j0 + kBlock);
        for (int64_t r = 0; r < rows; ++r) {
          const real *xr = px + r * c, *gr = pg + r * c;
          const real mu = pm[r], s = ps[r];
#pragma omp simd
          for (int64_t j = j0; j < j1; ++j) {
            pdw[j] += gr[j] * (xr[j] - mu) * s;
            pdb[j] += gr[j];
          }
        }
      });
      accumulate(1, dw);
      accumulate(2, db);
    }
  }

  const char* name() const override {
    return "layer_norm";
  }
};

Var layer_norm(const Var& x, const Var& weight, const Var& bias, real eps) {
  auto op = std::make_unique<LayerNormOp>();
  Tensor y = op->forward(x.value(), weight.value(), bias.value(), eps);
  return record(std::move(op), {x, weight, bias}, std::move(y));
}

}  // namespace attn
