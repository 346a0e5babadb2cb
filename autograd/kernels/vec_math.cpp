// Compiled without floating-point trap semantics so the vexp loops vectorise (see the header).
#pragma GCC optimize("no-trapping-math")

#include "autograd/kernels/vec_math.h"

#include <numbers>

#if defined(__AVX2__) && defined(__FMA__) && !defined(ATTN_REAL_DOUBLE)
#include <immintrin.h>
#define ATTN_SHORT_ROW_SOFTMAX 1
#endif

namespace attn::kernels {

void vexp_n(const real* x, real* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = vexp(x[j]);
}

void vtanh_n(const real* x, real* y, int64_t n) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) y[j] = vtanh(x[j]);
}

namespace {

real row_max(const real* x, int64_t c) {
  real m = -INFINITY;
#pragma omp simd reduction(max : m)
  for (int64_t j = 0; j < c; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

real row_sum(const real* x, int64_t c) {
  real total = 0;
#pragma omp simd reduction(+ : total)
  for (int64_t j = 0; j < c; ++j) total += x[j];
  return total;
}

}  // namespace

#ifdef ATTN_SHORT_ROW_SOFTMAX
namespace {

// vexp on 8 lanes: the same steps as the scalar vexp (vec_math.h), written with intrinsics so
// a short row's vectors stay in registers from load to store.
inline __m256 vexp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.7228391f), lo = _mm256_set1_ps(-103.972084f);
  // Lanes below lo compute on 0 (their result is replaced by 0 below), as in vexp: a denormal
  // intermediate would cost a microcode assist. NaN lanes are restored at the end.
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  const __m256 xc = _mm256_andnot_ps(under, _mm256_min_ps(x, hi));
  const __m256 shifter = _mm256_set1_ps(12582912.0f);
  const __m256 n =
      _mm256_sub_ps(_mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504089f), shifter), shifter);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  // 2^n as 2^(n/2) 2^(n - n/2), each exponent field built directly.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  // Below lo the result is exactly 0 (so -inf, a masked score, gives weight 0); NaN stays NaN.
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_ps(_mm256_andnot_ps(under, y), x, nan);
}

inline float hmax8(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// Lanes [0, n) of a vector set, for the masked load and store of a row's last partial vector.
inline __m256i first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

constexpr int64_t kShortRow = 64;  // up to 8 vectors: the whole row stays in registers

// softmax_row for c <= kShortRow. Attention rows are often this short (Tk = 32 in the reversal
// transformer), and there the generic loops cost more in loop set-up, a scalar remainder and
// three horizontal reductions than in the exps: here the row is loaded once (the partial last
// vector with a masked load, its missing lanes -inf), reduced twice and stored once.
void softmax_short_row(const float* x, float* y, int64_t c) {
  const int64_t full = c / 8, tail = c % 8, vectors = full + (tail ? 1 : 0);
  const __m256i tail_mask = first_lanes(tail);
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  __m256 v[kShortRow / 8];
  __m256 m = neg_inf;
  for (int64_t i = 0; i < full; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    m = _mm256_max_ps(m, v[i]);
  }
  if (tail) {
    const __m256 part = _mm256_maskload_ps(x + 8 * full, tail_mask);
    v[full] = _mm256_blendv_ps(neg_inf, part, _mm256_castsi256_ps(tail_mask));
    m = _mm256_max_ps(m, v[full]);
  }
  const __m256 row_max = _mm256_set1_ps(hmax8(m));
  __m256 total = _mm256_setzero_ps();
  for (int64_t i = 0; i < vectors; ++i) {
    v[i] = vexp8(_mm256_sub_ps(v[i], row_max));
    total = _mm256_add_ps(total, v[i]);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hsum8(total));
  for (int64_t i = 0; i < full; ++i) _mm256_storeu_ps(y + 8 * i, _mm256_mul_ps(v[i], inv));
  if (tail) {  // through memory: a masked store is microcoded and slow on AMD's cores
    alignas(32) float last[8];
    _mm256_store_ps(last, _mm256_mul_ps(v[full], inv));
    for (int64_t j = 0; j < tail; ++j) y[8 * full + j] = last[j];
  }
}

}  // namespace
#endif

void softmax_row(const real* x, real* y, int64_t c) {
#ifdef ATTN_SHORT_ROW_SOFTMAX
  if (c <= kShortRow) return softmax_short_row(x, y, c);
#endif
  const real m = row_max(x, c);
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

void softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c) {
  real dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < c; ++j) dot += dy[j] * y[j];
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) dx[j] = y[j] * (dy[j] - dot);
}

real log_sum_exp_row(const real* x, int64_t c) {
  const real m = row_max(x, c);
  real total = 0;
#pragma omp simd reduction(+ : total)
  for (int64_t j = 0; j < c; ++j) total += vexp(x[j] - m);
  return m + std::log(total);
}

void exp_shift_row(const real* x, real shift, real scale, real offset, real* y, int64_t c) {
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) y[j] = scale * (vexp(x[j] - shift) - offset);
}

void log_softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c) {
  const real total = row_sum(dy, c);
#pragma omp simd
  for (int64_t j = 0; j < c; ++j) dx[j] = dy[j] - vexp(y[j]) * total;
}

// ---- GELU ------------------------------------------------------------------------------------

namespace {

constexpr real kInvSqrt2 = real(1 / std::numbers::sqrt2);
constexpr real kInvSqrt2Pi = real(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
constexpr real kSqrt2OverPi = real(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
constexpr real kCubic = real(0.044715);  // the cubic coefficient of the tanh approximation

// Phi(x) ~ (1 + tanh u) / 2 = sigmoid(2u) = 1 / (1 + e^(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3).
// One exp instead of a tanh; e^(-2u) overflowing to inf gives exactly 0, so no branch is needed.
inline real tanh_form_cdf(real x) {
  const real u = kSqrt2OverPi * (x + kCubic * x * x * x);
  return 1 / (1 + vexp(-2 * u));
}

}  // namespace

// Exact: y = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.  Tanh form: y = x sigmoid(2u).
void gelu_n(const real* x, real* y, int64_t n, bool tanh_form) {
  if (tanh_form) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] * tanh_form_cdf(x[j]);
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = real(0.5) * x[j] * (1 + verf(x[j] * kInvSqrt2));
  }
}

// Exact: d/dx [x Phi(x)] = Phi(x) + x phi(x),  phi(x) = e^(-x^2/2) / sqrt(2 pi).
// Tanh form: d/dx [x s] = s + 2 x s (1 - s) u',  s = sigmoid(2u),  u' = sqrt(2/pi) (1 + 3 c x^2)
// (the same as (1 + t)/2 + x (1 - t^2) u'/2 written with t = tanh u = 2s - 1).
// Phi(x) (or s) is read back from the forward's output as y / x instead of being recomputed:
// one division instead of an erf (or an exp). Near 0, where y / x loses its digits, both are
// 1/2 + x / sqrt(2 pi) to within x^3 / 15 (below 1e-13 for |x| < 1e-4).
void gelu_backward_n(
    const real* x, const real* y, const real* dy, real* dx, int64_t n, bool tanh_form) {
  constexpr real kSmall = real(1e-4);
  if (tanh_form) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      const real v = x[j];
      const bool small = v < kSmall && v > -kSmall;
      const real s = small ? real(0.5) + v * kInvSqrt2Pi : y[j] / (small ? real(1) : v);
      const real du = kSqrt2OverPi * (1 + 3 * kCubic * v * v);
      dx[j] = dy[j] * (s + 2 * v * s * (1 - s) * du);
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      const real v = x[j];
      const bool small = v < kSmall && v > -kSmall;
      const real cdf = small ? real(0.5) + v * kInvSqrt2Pi : y[j] / (small ? real(1) : v);
      dx[j] = dy[j] * (cdf + v * kInvSqrt2Pi * vexp(real(-0.5) * v * v));
    }
  }
}

}  // namespace attn::kernels
