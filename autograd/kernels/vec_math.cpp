// Compiled without floating-point trap semantics so the vexp loops vectorise (see the header).
#pragma GCC optimize("no-trapping-math")

#include "autograd/kernels/vec_math.h"
#include "autograd/kernels/isa_variant.h"

#include "autograd/kernels/avx2_math.h"

#include <algorithm>
#include <iterator>

namespace attn::kernels::ATTN_ISA_NS {

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

#ifdef ATTN_AVX2_FLOAT
namespace {

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

constexpr int64_t kShortRow = 128;  // up to 16 vectors: the row is loaded once

// Softmax over x[0, c) for 8 (NV - 1) < c <= 8 NV, the row held in NV vectors. Attention rows
// are often this short (Tk = 32 in the reversal transformer, up to 128 in the decoder), and
// there the generic loops cost more in loop set-up, a scalar remainder and three passes than in
// the exps. NV is a template argument so the loops unroll and the vectors stay in registers
// (or in spill slots the compiler schedules), where a runtime count left them in an array.
// The lanes from c on count as -inf. WHOLE: y gets all NV vectors, 0 in those lanes (the
// caller's row is at least 8 NV long); else exactly c values.
template <int NV, bool WHOLE>
void softmax_vectors(const float* x, float* y, int64_t c) {
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  const int64_t tail = c - 8 * (NV - 1);  // 1..8 lanes of the last vector
  const __m256i tail_mask = first_lanes(tail);
  __m256 v[NV];
  __m256 m = neg_inf;
  for (int i = 0; i < NV - 1; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    m = _mm256_max_ps(m, v[i]);
  }
  // A whole-vector row may be read past c (it is the caller's memory); else a masked load.
  const bool whole = WHOLE || tail == 8;
  const __m256 last =
      whole ? _mm256_loadu_ps(x + 8 * (NV - 1)) : _mm256_maskload_ps(x + 8 * (NV - 1), tail_mask);
  v[NV - 1] = _mm256_blendv_ps(neg_inf, last, _mm256_castsi256_ps(tail_mask));
  m = _mm256_max_ps(m, v[NV - 1]);
  const __m256 row_max = _mm256_set1_ps(hmax8(m));
  __m256 total = _mm256_setzero_ps();
  for (int i = 0; i < NV; ++i) {
    v[i] = vexp8(_mm256_sub_ps(v[i], row_max));
    total = _mm256_add_ps(total, v[i]);
  }
  const __m256 inv = _mm256_set1_ps(1.0f / hsum8(total));
  for (int i = 0; i < NV - 1; ++i) _mm256_storeu_ps(y + 8 * i, _mm256_mul_ps(v[i], inv));
  if (whole) return _mm256_storeu_ps(y + 8 * (NV - 1), _mm256_mul_ps(v[NV - 1], inv));
  // Through memory: a masked store is microcoded and slow on AMD's cores.
  alignas(32) float tail_values[8];
  _mm256_store_ps(tail_values, _mm256_mul_ps(v[NV - 1], inv));
  for (int64_t j = 0; j < tail; ++j) y[8 * (NV - 1) + j] = tail_values[j];
}

// softmax_vectors for any 0 < c <= kShortRow: the instance for c's number of vectors.
template <bool WHOLE>
void softmax_short_row(const float* x, float* y, int64_t c) {
  using Kernel = void (*)(const float*, float*, int64_t);
  static constexpr Kernel kernels[] = {
      softmax_vectors<1, WHOLE>,  softmax_vectors<2, WHOLE>,  softmax_vectors<3, WHOLE>,
      softmax_vectors<4, WHOLE>,  softmax_vectors<5, WHOLE>,  softmax_vectors<6, WHOLE>,
      softmax_vectors<7, WHOLE>,  softmax_vectors<8, WHOLE>,  softmax_vectors<9, WHOLE>,
      softmax_vectors<10, WHOLE>, softmax_vectors<11, WHOLE>, softmax_vectors<12, WHOLE>,
      softmax_vectors<13, WHOLE>, softmax_vectors<14, WHOLE>, softmax_vectors<15, WHOLE>,
      softmax_vectors<16, WHOLE>};
  static_assert(std::size(kernels) * 8 == kShortRow);
  kernels[(c - 1) / 8](x, y, c);
}

}  // namespace
#endif

void softmax_row(const real* x, real* y, int64_t c) {
#ifdef ATTN_AVX2_FLOAT
  if (c > 0 && c <= kShortRow) return softmax_short_row<false>(x, y, c);
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

void softmax_prefix_row(real* row, int64_t seen, int64_t cols) {
  int64_t written = seen;  // [0, written) holds the softmax; zeros follow
#ifdef ATTN_AVX2_FLOAT
  // When the row has room for seen's last whole vector, that vector is stored whole (its padding
  // lanes come out 0); otherwise softmax_row writes exactly seen values.
  const int64_t width = (seen + 7) / 8 * 8;
  if (seen > 0 && seen <= kShortRow && width <= cols) {
    softmax_short_row<true>(row, row, seen);
    written = width;
  } else
#endif
  {
    softmax_row(row, row, seen);
  }
  std::fill(row + written, row + cols, real(0));
}

void softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c) {
  real dot = 0;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < c; ++j) dot += dy[j] * y[j];
  softmax_backward_row_given(y, dy, dx, c, dot);
}

void softmax_backward_row_given(const real* y, const real* dy, real* dx, int64_t c, real dot) {
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

}  // namespace attn::kernels::ATTN_ISA_NS
