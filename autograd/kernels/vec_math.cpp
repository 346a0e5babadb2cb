// Compiled without floating-point trap semantics so the vexp loops vectorise (see the header).
#pragma GCC optimize("no-trapping-math")

#include "autograd/kernels/vec_math.h"

namespace attn::kernels {

void vexp_n(const real* x, real* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = vexp(x[j]);
}

void softmax_row(const real* x, real* y, int64_t c) {
  real m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < c; ++j) m = x[j] > m ? x[j] : m;
  real total = 0;
#pragma omp simd reduction(+ : total)
  for (int64_t j = 0; j < c; ++j) {
    y[j] = vexp(x[j] - m);
    total += y[j];
  }
  const real inv = 1 / total;
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) y[j] *= inv;
}

}  // namespace attn::kernels
