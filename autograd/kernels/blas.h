// The one door to BLAS: every matrix product in attnlab goes through gemm().
//
//   // C (m,n) = alpha * op(A) (m,k) * op(B) (k,n) + beta * C, row-major
//   attn::kernels::gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n);
//
// Compiles to cblas_sgemm in the float build and cblas_dgemm in the double (gradcheck) build.
#pragma once

#include <cstdint>

#include "autograd/real.h"

namespace attn::kernels {

// One product C (m,n) = alpha op(A) (m,k) op(B) (k,n) + beta C, row-major, op an optional
// transpose; lda, ldb, ldc are the row strides of A, B and C as stored. For the calls that read
// better with names:
//   gemm_split({.trans_b = true, .m = rows, .n = out, .k = in, .a = x, .lda = in, .b = w,
//               .ldb = in, .c = y, .ldc = out});
// Which part of a product counts, for causal attention's triangular matrices
// (kernels/causal_blocks.h). The parts outside are never read (A) or not needed (C), so their
// multiply-adds are skipped:
//   kLowerA: op(A)(i,p) is taken as 0 for p > i + diagonal  (torch.tril(op(A), diagonal));
//   kUpperA: op(A)(i,p) is taken as 0 for p < i + diagonal  (torch.triu(op(A), diagonal));
//   kLowerC: only C(i,j) with j <= i + diagonal is wanted; C's other entries may or may not be
//            written.
struct Triangle {
  enum class Part { kAll, kLowerA, kUpperA, kLowerC };
  Part part = Part::kAll;
  int64_t diagonal = 0;
};

struct GemmCall {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  real alpha = 1;
  const real* a = nullptr;
  int64_t lda = 0;
  const real* b = nullptr;
  int64_t ldb = 0;
  real beta = 0;  // 0: C is written, never read
  real* c = nullptr;
  int64_t ldc = 0;
  Triangle triangle{};
};

void gemm(const GemmCall& g);

// The same, positional (as cblas_sgemm without its layout argument).
inline void gemm(bool trans_a,
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
  gemm(GemmCall{trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

// The same product with C split into kSplitThreads blocks (along M, or along N when M is the
// shorter side), each a single-threaded GEMM inside one parallel region (one after the other on
// one thread, so the bits do not depend on the thread count). gemm() outside a parallel body
// comes here for every product BLAS would compute. On 2 threads
// this measured faster than OpenBLAS splitting the call itself (docs/performance.md): the
// threads share no packed panels and meet at one barrier. Inside a parallel body
// (parallel.h), or when small, it is plain gemm().
void gemm_split(const GemmCall& g);

}  // namespace attn::kernels
