// Matrix products too small for BLAS to pay off: attention's per-head products at small
// head sizes, e.g. (32,16) x (16,33) for every batch entry and head.
//
//   GemmCall g{.trans_b = true, .m = m, .n = n, .k = k, .a = a, .lda = lda, .b = b, .ldb = ldb,
//              .c = c, .ldc = ldc};
//   if (attn::kernels::small_gemm_fits(g)) attn::kernels::small_gemm(g);
//
// Same contract as kernels::gemm (a GemmCall: C = alpha op(A) op(B) + beta C; beta 0 never
// reads C). OpenBLAS spends a fixed cost per call on top of the arithmetic: it zeroes C when beta
// is 0 (a separate pass), packs both operands into its panel layout, and dispatches. For a (32,16)
// x (16,33) product that cost is larger than the ~34 kFLOP of work. This kernel packs only op(B)
// (at most kSmallMaxK x kSmallMaxN values, into a per-thread buffer) and then computes register
// blocks of 4 rows x 16 columns straight into C. A B that is not transposed and whose rows are
// whole vectors is read in place, not packed.
#pragma once

#include <cstdint>

#include "autograd/kernels/blas.h"
#include "autograd/real.h"

namespace attn::kernels {

inline constexpr int64_t kSmallMinM = 8;    // below this BLAS's gemv-like paths do well
inline constexpr int64_t kSmallMaxN = 128;  // op(B) is packed into one buffer of K x N values,
inline constexpr int64_t kSmallMaxK = 128;  // at most kSmallMaxPanel of them (32 KB in float)
inline constexpr int64_t kSmallMaxPanel = 128 * 64;
// OpenBLAS runs a product of up to 4 * 65536 multiply-adds on one thread; above that, outside a
// parallel region, it splits the product across the threads, which this kernel does not.
inline constexpr int64_t kSmallMaxSerialMNK = 4 * 65536;

// True when small_gemm beats BLAS here (measured; docs/performance.md): small panels, and
// either a product BLAS would not split or a call made inside a parallel region already. A call
// with a triangle (blas.h) fits whenever op(B) packs: the kernel skips the triangle's unneeded
// part 4 rows at a time, which BLAS cannot.
bool small_gemm_fits(const GemmCall& g);

void small_gemm(const GemmCall& g);

// Softmax's backward applied by the store: C(i, j) = P(i, j) (op(A) op(B)(i, j) - dot[i]), with
// P(i, j) = p[i * ldp + j] and dot indexed like C's rows. For causal attention's score gradient
// dS = P o (dO V^T - <dO_i, O_i>): the product's tile is still in registers, so the row pass
// that read dP back, and the zeros it wrote first, are gone. Needs alpha 1 and beta 0. With a
// kLowerC triangle the entries past the diagonal that the blocks reach get P's values there
// times their difference (0 where P is 0).
struct SoftmaxBackwardStore {
  const real* p = nullptr;
  int64_t ldp = 0;
  const real* dot = nullptr;
};
void small_gemm(const GemmCall& g, const SoftmaxBackwardStore& store);

}  // namespace attn::kernels
