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
          int64_t ldc);

// The same product with C split into one block per thread (along M, or along N when M is the
// shorter side), each block a single-threaded GEMM inside one parallel region. On 2 threads
// this measured faster than OpenBLAS splitting the call itself (docs/performance.md): the
// threads share no packed panels and meet at one barrier. Every element of C is computed the
// same way whatever the split. Inside a parallel region, or when small, it is plain gemm().
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
                int64_t ldc);

}  // namespace attn::kernels
