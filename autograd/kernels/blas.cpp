#include "autograd/kernels/blas.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "autograd/kernels/parallel.h"
#include "autograd/kernels/small_gemm.h"

namespace attn::kernels {

void gemm(bool trans_a,
          bool trans_b,
          int64_t m,
          int64_t n,
          int64_t k,
          real alpha,
          const real* a,
          int64_t lda,
          const real* b,
          int64_t ldb,
          real beta,
          real* c,
          int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (small_gemm_fits(m, n, k))  // attention's per-head products: BLAS's per-call cost dominates
    return small_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  const CBLAS_TRANSPOSE ta = trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
#ifdef ATTN_REAL_DOUBLE
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

void gemm_split(bool trans_a,
                bool trans_b,
                int64_t m,
                int64_t n,
                int64_t k,
                real alpha,
                const real* a,
                int64_t lda,
                const real* b,
                int64_t ldb,
                real beta,
                real* c,
                int64_t ldc) {
  constexpr int64_t kAlign = 16;                  // blocks of whole micro-kernel panels
  constexpr int64_t kMinWork = int64_t{1} << 18;  // multiply-adds below which one thread wins
  const int64_t threads = omp_in_parallel() ? 1 : num_threads();
  const bool by_rows = m >= n;
  const int64_t extent = by_rows ? m : n;
  const int64_t block = (extent / std::max<int64_t>(threads, 1) + kAlign - 1) / kAlign * kAlign;
  if (threads < 2 || m * n * k < kMinWork || block < 2 * kAlign) {
    gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const int64_t blocks = (extent + block - 1) / block;
  // Block i covers rows (or columns) [lo, lo + len): op(A)'s row lo starts at a + lo*lda (a + lo
  // when A is stored transposed); op(B)'s column lo at b + lo (b + lo*ldb when transposed).
  parallel_for(blocks, kParallelThreshold, [&](int64_t i) {
    const int64_t lo = i * block, len = std::min(block, extent - lo);
    if (by_rows)
      gemm(trans_a, trans_b, len, n, k, alpha, a + (trans_a ? lo : lo * lda), lda, b, ldb, beta,
           c + lo * ldc, ldc);
    else
      gemm(trans_a, trans_b, m, len, k, alpha, a, lda, b + (trans_b ? lo * ldb : lo), ldb, beta,
           c + lo, ldc);
  });
}

}  // namespace attn::kernels
