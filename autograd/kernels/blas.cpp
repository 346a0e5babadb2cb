#include "autograd/kernels/blas.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "autograd/kernels/parallel.h"
#include "autograd/kernels/small_gemm.h"
#include "autograd/kernels/triangle_gemm.h"

namespace attn::kernels {

void gemm(const GemmCall& g) {
  if (g.m == 0 || g.n == 0) return;
  if (small_gemm_fits(g))  // attention's per-head products: BLAS's per-call cost is larger
    return small_gemm(g);  // than their arithmetic (and triangles are skipped 4 rows at a time)
  if (g.triangle.part != Triangle::Part::kAll) return triangle_gemm_by_blocks(g);
  const CBLAS_TRANSPOSE ta = g.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = g.trans_b ? CblasTrans : CblasNoTrans;
#ifdef ATTN_REAL_DOUBLE
  cblas_dgemm(CblasRowMajor, ta, tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c,
              g.ldc);
#else
  cblas_sgemm(CblasRowMajor, ta, tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c,
              g.ldc);
#endif
}

void gemm_split(const GemmCall& g) {
  constexpr int64_t kAlign = 16;                  // blocks of whole micro-kernel panels
  constexpr int64_t kMinWork = int64_t{1} << 18;  // multiply-adds below which one thread wins
  const int64_t threads = omp_in_parallel() ? 1 : num_threads();
  const bool by_rows = g.m >= g.n;
  const int64_t extent = by_rows ? g.m : g.n;
  const int64_t block = (extent / std::max<int64_t>(threads, 1) + kAlign - 1) / kAlign * kAlign;
  if (threads < 2 || g.m * g.n * g.k < kMinWork || block < 2 * kAlign) return gemm(g);
  const int64_t blocks = (extent + block - 1) / block;
  // Block i covers rows (or columns) [lo, lo + len): op(A)'s row lo starts at a + lo*lda (a + lo
  // when A is stored transposed); op(B)'s column lo at b + lo (b + lo*ldb when transposed).
  parallel_for(blocks, kParallelThreshold, [&](int64_t i) {
    const int64_t lo = i * block, len = std::min(block, extent - lo);
    GemmCall part = g;
    if (by_rows) {
      part.m = len;
      part.a = g.a + (g.trans_a ? lo : lo * g.lda);
      part.c = g.c + lo * g.ldc;
      part.triangle.diagonal += lo;  // row i of the block is row lo + i of the whole
    } else {
      part.n = len;
      part.b = g.b + (g.trans_b ? lo * g.ldb : lo);
      part.c = g.c + lo;
      if (g.triangle.part == Triangle::Part::kLowerC) part.triangle.diagonal -= lo;
    }
    gemm(part);
  });
}

}  // namespace attn::kernels
