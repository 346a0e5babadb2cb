#include "autograd/kernels/blas.h"

#include <cblas.h>

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

}  // namespace attn::kernels
