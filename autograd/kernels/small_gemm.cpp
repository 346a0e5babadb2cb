#include "autograd/kernels/small_gemm.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif
#include <omp.h>

#include <algorithm>
#include <cmath>

namespace attn::kernels {

namespace {

// One AVX register of `real`s and the few operations the kernel needs. Builds for a target
// without AVX2/FMA (the Debug build, generic x86-64) get the same operations on a plain array,
// with std::fma so that they round exactly as the FMA instructions do.
#if defined(__AVX2__) && defined(__FMA__)
#ifdef ATTN_REAL_DOUBLE
using Vec = __m256d;
constexpr int kLanes = 4;
inline Vec vzero() {
  return _mm256_setzero_pd();
}
inline Vec vload(const double* p) {
  return _mm256_loadu_pd(p);
}
inline void vstore(double* p, Vec v) {
  _mm256_storeu_pd(p, v);
}
inline Vec vset(double s) {
  return _mm256_set1_pd(s);
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_pd(a, b, c);
}
inline Vec vmul(Vec a, Vec b) {
  return _mm256_mul_pd(a, b);
}
#else
using Vec = __m256;
constexpr int kLanes = 8;
inline Vec vzero() {
  return _mm256_setzero_ps();
}
inline Vec vload(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void vstore(float* p, Vec v) {
  _mm256_storeu_ps(p, v);
}
inline Vec vset(float s) {
  return _mm256_set1_ps(s);
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline Vec vmul(Vec a, Vec b) {
  return _mm256_mul_ps(a, b);
}
#endif  // ATTN_REAL_DOUBLE
#else
constexpr int kLanes = 32 / sizeof(real);
struct Vec {
  real lane[kLanes];
};
inline Vec vzero() {
  return Vec{};
}
inline Vec vload(const real* p) {
  Vec r;
  std::copy(p, p + kLanes, r.lane);
  return r;
}
inline void vstore(real* p, Vec v) {
  std::copy(v.lane, v.lane + kLanes, p);
}
inline Vec vset(real s) {
  Vec r;
  std::fill(r.lane, r.lane + kLanes, s);
  return r;
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  for (int i = 0; i < kLanes; ++i) c.lane[i] = std::fma(a.lane[i], b.lane[i], c.lane[i]);
  return c;
}
inline Vec vmul(Vec a, Vec b) {
  for (int i = 0; i < kLanes; ++i) a.lane[i] *= b.lane[i];
  return a;
}
#endif  // AVX2 and FMA

constexpr int kRows = 4;  // register block: kRows x kVecs vectors of C (8 accumulators)
constexpr int kVecs = 2;

// op(B) as a (K, n_pad) row-major panel, zero-padded to whole vectors, for this thread.
alignas(64) thread_local real t_panel[kSmallMaxPanel];

int64_t pack_b(bool trans_b, int64_t n, int64_t k, const real* b, int64_t ldb) {
  const int64_t n_pad = (n + kLanes - 1) / kLanes * kLanes;
  for (int64_t p = 0; p < k; ++p) {
    real* row = t_panel + p * n_pad;
    if (!trans_b) {
      std::copy(b + p * ldb, b + p * ldb + n, row);
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] = b[j * ldb + p];
    }
    std::fill(row + n, row + n_pad, real(0));
  }
  return n_pad;
}

// C rows [0, ROWS) x columns [0, cols) of one register block, cols <= VECS * kLanes:
// acc(r, :) = sum_p A(r, p) * panel(p, :), then C = alpha acc + beta C.
// A(r, p) = a[r * a_row + p * a_col]: (a_row, a_col) = (lda, 1), or (1, lda) when transposed.
template <int ROWS, int VECS>
void register_block(int64_t k,
                    const real* a,
                    int64_t a_row,
                    int64_t a_col,
                    const real* panel,
                    int64_t n_pad,
                    real alpha,
                    real beta,
                    real* c,
                    int64_t ldc,
                    int64_t cols) {
  Vec acc[ROWS][VECS];
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < VECS; ++v) acc[r][v] = vzero();
  for (int64_t p = 0; p < k; ++p) {
    Vec bv[VECS];
    for (int v = 0; v < VECS; ++v) bv[v] = vload(panel + p * n_pad + v * kLanes);
    for (int r = 0; r < ROWS; ++r) {
      const Vec s = vset(a[r * a_row + p * a_col]);
      for (int v = 0; v < VECS; ++v) acc[r][v] = vfma(s, bv[v], acc[r][v]);
    }
  }
  const Vec va = vset(alpha), vb = vset(beta);
  for (int r = 0; r < ROWS; ++r) {
    real* row = c + r * ldc;
    if (cols == VECS * kLanes) {
      for (int v = 0; v < VECS; ++v) {
        Vec out = vmul(va, acc[r][v]);
        if (beta != 0) out = vfma(vb, vload(row + v * kLanes), out);  // beta 0: C is not read
        vstore(row + v * kLanes, out);
      }
    } else {
      alignas(32) real tail[VECS * kLanes];
      for (int v = 0; v < VECS; ++v) vstore(tail + v * kLanes, vmul(va, acc[r][v]));
      for (int64_t j = 0; j < cols; ++j) row[j] = beta != 0 ? tail[j] + beta * row[j] : tail[j];
    }
  }
}

// All columns of rows [i, i + ROWS): blocks of kVecs vectors, then one vector at a time.
template <int ROWS>
void row_block(int64_t n,
               int64_t k,
               const real* a,
               int64_t a_row,
               int64_t a_col,
               const real* panel,
               int64_t n_pad,
               real alpha,
               real beta,
               real* c,
               int64_t ldc) {
  int64_t j = 0;
  for (; j + kVecs * kLanes <= n_pad; j += kVecs * kLanes)
    register_block<ROWS, kVecs>(k, a, a_row, a_col, panel + j, n_pad, alpha, beta, c + j, ldc,
                                std::min<int64_t>(kVecs * kLanes, n - j));
  for (; j < n; j += kLanes)
    register_block<ROWS, 1>(k, a, a_row, a_col, panel + j, n_pad, alpha, beta, c + j, ldc,
                            std::min<int64_t>(kLanes, n - j));
}

}  // namespace

bool small_gemm_fits(int64_t m, int64_t n, int64_t k) {
  const int64_t n_pad = (n + kLanes - 1) / kLanes * kLanes;  // the panel's row length
  if (m < kSmallMinM || n > kSmallMaxN || k > kSmallMaxK || n_pad * k > kSmallMaxPanel)
    return false;
  return m * n * k <= kSmallMaxSerialMNK || omp_in_parallel();
}

void small_gemm(const GemmCall& g) {
  const int64_t m = g.m, n = g.n, k = g.k, ldc = g.ldc;
  const real alpha = g.alpha, beta = g.beta;
  const real* a = g.a;
  real* c = g.c;
  const int64_t n_pad = pack_b(g.trans_b, n, k, g.b, g.ldb);
  const int64_t a_row = g.trans_a ? 1 : g.lda, a_col = g.trans_a ? g.lda : 1;
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    row_block<kRows>(n, k, a + i * a_row, a_row, a_col, t_panel, n_pad, alpha, beta, c + i * ldc,
                     ldc);
  const real* a_rest = a + i * a_row;
  real* c_rest = c + i * ldc;
  switch (m - i) {
    case 3:
      return row_block<3>(n, k, a_rest, a_row, a_col, t_panel, n_pad, alpha, beta, c_rest, ldc);
    case 2:
      return row_block<2>(n, k, a_rest, a_row, a_col, t_panel, n_pad, alpha, beta, c_rest, ldc);
    case 1:
      return row_block<1>(n, k, a_rest, a_row, a_col, t_panel, n_pad, alpha, beta, c_rest, ldc);
    default:
      return;
  }
}

}  // namespace attn::kernels
