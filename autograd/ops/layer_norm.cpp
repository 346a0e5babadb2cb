// LayerNormOp: normalise each row over the last axis, then scale and shift (a fused kernel).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/row_stats.h"

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
      // Plain locals, not a structured binding: clang 14 (the fuzz and sanitizer builds)
      // cannot capture a binding into the simd loop below.
      const kernels::RowMoments m = kernels::row_moments(xr, c);  // two passes: no cancellation
      const real mu = m.mean;
      const real s = 1 / std::sqrt(m.var + eps);
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
  // One pass over x and dy does both: blocks of kRowBlock rows write their dx rows and their
  // own partial dw, db (so no two threads add into one sum), and sum_to_shape then adds the
  // partials in block order - the same sums whatever the number of threads.
  void backward() override {
    const bool want_dx = needs_grad(0), want_wb = needs_grad(1) || needs_grad(2);
    const real *px = x.data(), *pw = w.data(), *pg = dy().data();
    const real *pm = mean.data(), *ps = rstd.data();
    // Pre-norm blocks: x also feeds the residual add, whose backward ran first and gave x a
    // gradient already; dx is added into it in the same pass (no temporary, no extra add).
    Tensor* sum_into = want_dx ? existing_grad(0) : nullptr;
    Tensor fresh = want_dx && !sum_into ? Tensor::empty(x.shape()) : Tensor();
    real* pd = want_dx ? (sum_into ? *sum_into : fresh).data() : nullptr;
    constexpr int64_t kRowBlock = 32;
    const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
    // Per block of rows: its partial dw and db.
    Tensor partial_w = want_wb ? Tensor::zeros({blocks, c}) : Tensor();
    Tensor partial_b = want_wb ? Tensor::zeros({blocks, c}) : Tensor();
    kernels::parallel_for(blocks, kRowBlock * c * 10, [&](int64_t blk) {
      real* part_w = want_wb ? partial_w.data() + blk * c : nullptr;
      real* part_b = want_wb ? partial_b.data() + blk * c : nullptr;
      for (int64_t r = blk * kRowBlock; r < std::min(rows, (blk + 1) * kRowBlock); ++r) {
        const real *xr = px + r * c, *gr = pg + r * c;
        const real mu = pm[r], s = ps[r];
        if (want_wb) {
#pragma omp simd
          for (int64_t j = 0; j < c; ++j) {
            part_w[j] += gr[j] * (xr[j] - mu) * s;
            part_b[j] += gr[j];
          }
        }
        if (want_dx) dx_row(xr, gr, pw, mu, s, pd + r * c, sum_into != nullptr);
      }
    });
    if (want_dx && !sum_into) accumulate(0, fresh);
    if (want_wb) {
      accumulate(1, kernels::sum_to_shape(partial_w, {c}));
      accumulate(2, kernels::sum_to_shape(partial_b, {c}));
    }
  }

  // One row of dx (see backward), written to dr or, with add, added onto it.
  void dx_row(
      const real* xr, const real* gr, const real* pw, real mu, real s, real* dr, bool add) const {
    const kernels::RowMeans means = kernels::layer_norm_grad_means(xr, gr, pw, mu, s, c);
    const real mean_g = means.g, mean_gx = means.gx;  // locals: see forward
    auto dx_j = [&](int64_t j) {
      const real xhat = (xr[j] - mu) * s;
      return s * (gr[j] * pw[j] - mean_g - xhat * mean_gx);
    };
    if (add) {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) dr[j] += dx_j(j);
    } else {
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) dr[j] = dx_j(j);
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
