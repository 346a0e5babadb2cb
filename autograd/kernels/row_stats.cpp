#include "autograd/kernels/row_stats.h"
#include "autograd/kernels/isa_variant.h"

#include "autograd/kernels/avx2_math.h"

namespace attn::kernels::ATTN_ISA_NS {

namespace {

#ifdef ATTN_AVX2_FLOAT
inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// Sum over j of f(j) for 8 lanes j at a time, c a multiple of 32, in four running vectors.
template <class F>
float sum_by_fours(int64_t c, F&& f) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t j = 0; j < c; j += 32) {
    a0 = _mm256_add_ps(a0, f(j));
    a1 = _mm256_add_ps(a1, f(j + 8));
    a2 = _mm256_add_ps(a2, f(j + 16));
    a3 = _mm256_add_ps(a3, f(j + 24));
  }
  return hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}
#endif

}  // namespace

RowMoments row_moments(const real* x, int64_t c) {
  const real n = static_cast<real>(c);
#ifdef ATTN_AVX2_FLOAT
  if (c % 32 == 0) {
    const float mu = sum_by_fours(c, [&](int64_t j) { return _mm256_loadu_ps(x + j); }) / n;
    const __m256 m = _mm256_set1_ps(mu);
    const float var = sum_by_fours(c,
                                   [&](int64_t j) {
                                     const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + j), m);
                                     return _mm256_mul_ps(d, d);
                                   }) /
                      n;
    return {mu, var};
  }
#endif
  real mu = 0, var = 0;
#pragma omp simd reduction(+ : mu)
  for (int64_t j = 0; j < c; ++j) mu += x[j];
  mu /= n;
#pragma omp simd reduction(+ : var)
  for (int64_t j = 0; j < c; ++j) var += (x[j] - mu) * (x[j] - mu);
  return {mu, var / n};
}

RowMeans layer_norm_grad_means(
    const real* x, const real* dy, const real* w, real mu, real rstd, int64_t c) {
  const real n = static_cast<real>(c);
#ifdef ATTN_AVX2_FLOAT
  if (c % 32 == 0) {
    const __m256 m = _mm256_set1_ps(mu), s = _mm256_set1_ps(rstd);
    auto g = [&](int64_t j) {
      return _mm256_mul_ps(_mm256_loadu_ps(dy + j), _mm256_loadu_ps(w + j));
    };
    const float mean_g = sum_by_fours(c, g) / n;
    const float mean_gx = sum_by_fours(c,
                                       [&](int64_t j) {
                                         const __m256 xhat = _mm256_mul_ps(
                                             _mm256_sub_ps(_mm256_loadu_ps(x + j), m), s);
                                         return _mm256_mul_ps(g(j), xhat);
                                       }) /
                          n;
    return {mean_g, mean_gx};
  }
#endif
  real mean_g = 0, mean_gx = 0;
#pragma omp simd reduction(+ : mean_g, mean_gx)
  for (int64_t j = 0; j < c; ++j) {
    const real g = dy[j] * w[j];
    mean_g += g;
    mean_gx += g * (x[j] - mu) * rstd;
  }
  return {mean_g / n, mean_gx / n};
}

}  // namespace attn::kernels::ATTN_ISA_NS
