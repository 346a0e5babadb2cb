#include "autograd/kernels/blas.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "autograd/kernels/parallel.h"
#include "autograd/kernels/small_gemm.h"
#include "autograd/kernels/triangle_gemm.h"

namespace attn::kernels {

namespace {

// While alive, the calling thread's OpenMP thread count is 1 when it is outside an active
// parallel region. OpenBLAS's OpenMP build splits a call over omp_get_max_threads() threads
// there (inside an active region it runs on the calling thread anyway), and its bits follow its
// split; openblas_set_num_threads(1) does not stop it: 0.3.21 resets its count to OpenMP's.
class BlasOnCallingThread {
 public:
  BlasOnCallingThread() : outer_(omp_in_parallel() ? 0 : omp_get_max_threads()) {
    if (outer_ > 1) omp_set_num_threads(1);
  }
  ~BlasOnCallingThread() {
    if (outer_ > 1) omp_set_num_threads(outer_);
  }
  BlasOnCallingThread(const BlasOnCallingThread&) = delete;
  BlasOnCallingThread& operator=(const BlasOnCallingThread&) = delete;

 private:
  int outer_;
};

// The product by BLAS (on the calling thread), or by blocks for a triangle that small_gemm
// cannot pack.
void gemm_without_small(const GemmCall& g) {
  if (g.triangle.part != Triangle::Part::kAll) return triangle_gemm_by_blocks(g);
  const BlasOnCallingThread one_thread;
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

void gemm_by(bool small, const GemmCall& g) {
  if (small) return small_gemm(g);
  gemm_without_small(g);
}

}  // namespace

void gemm(const GemmCall& g) {
  if (g.m == 0 || g.n == 0) return;
  // attention's per-head products: BLAS's per-call cost is larger than their arithmetic (and
  // triangles are skipped 4 rows at a time)
  const bool small = small_gemm_fits(g);
  // A large product outside a parallel body is split by gemm_split, never by OpenBLAS's own
  // threads: OpenBLAS's split follows the thread count, and so would the bits.
  if (!small && !in_parallel_body() && g.triangle.part == Triangle::Part::kAll)
    return gemm_split(g);
  gemm_by(small, g);
}

void gemm_split(const GemmCall& g) {
  if (g.m == 0 || g.n == 0) return;
  constexpr int64_t kAlign = 16;                  // blocks of whole micro-kernel panels
  constexpr int64_t kMinWork = int64_t{1} << 18;  // multiply-adds below which one thread wins
  // The kernel is chosen once, for the whole product and as if from a parallel body (this
  // function splits the product itself): every block takes the same kernel, whatever the thread
  // count. Each block keeps its whole K, so no element's sum is cut.
  bool small = false;
  {
    const ParallelBody as_in_a_body;
    small = small_gemm_fits(g);
  }
  // The blocks are the same at any thread count too (kSplitThreads of them, run one after the
  // other on one thread): OpenBLAS's bits for an element can depend on where its block starts.
  const bool by_rows = g.m >= g.n;
  const int64_t extent = by_rows ? g.m : g.n;
  const int64_t block = (extent / kSplitThreads + kAlign - 1) / kAlign * kAlign;
  if (in_parallel_body() || g.m * g.n * g.k < kMinWork || block < 2 * kAlign)
    return gemm_by(small, g);
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
    gemm_by(small, part);
  });
}

}  // namespace attn::kernels
