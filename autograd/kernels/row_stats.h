// The per-row reductions of LayerNorm, forward and backward:
//
//   RowMoments m = attn::kernels::row_moments(x_row, c);       // mean and biased variance
//   RowMeans g = attn::kernels::layer_norm_grad_means(x_row, dy_row, w, mu, rstd, c);
//
// A row of d_model values (128 in the benchmarks) is short: summed into one running vector, its
// chain of dependent adds is the whole cost. The AVX2 path (float, C a multiple of 32) keeps four
// running vectors and measured 37 ns per row of 128 for the forward's two reductions and its
// output pass, against 75 ns (docs/performance.md).
#pragma once

#include <cstdint>

#include "autograd/real.h"

namespace attn::kernels {

struct RowMoments {
  real mean, var;  // mean_j x_j and mean_j (x_j - mean)^2, two passes (no cancellation)
};
RowMoments row_moments(const real* x, int64_t c);

struct RowMeans {
  real g, gx;  // mean_j g_j and mean_j g_j xhat_j with g = dy w, xhat = (x - mu) rstd
};
RowMeans layer_norm_grad_means(
    const real* x, const real* dy, const real* w, real mu, real rstd, int64_t c);

}  // namespace attn::kernels
