#include "autograd/kernels/triangle_gemm.h"

#include <algorithm>
#include <vector>

#include "autograd/kernels/small_gemm.h"

namespace attn::kernels {

namespace {

using Part = Triangle::Part;

// Rows [r0, r1) and inner indices [p0, p1) of g: a product of its own (C's rows r0.., the same
// columns), with no triangle.
GemmCall inner_part(const GemmCall& g, int64_t r0, int64_t r1, int64_t p0, int64_t p1) {
  GemmCall part = g;
  part.triangle = {};
  part.m = r1 - r0;
  part.k = p1 - p0;
  part.a = g.a + (g.trans_a ? p0 * g.lda + r0 : r0 * g.lda + p0);
  part.b = g.b + (g.trans_b ? p0 : p0 * g.ldb);
  part.c = g.c + r0 * g.ldc;
  return part;
}

// Rows [r0, r1) and columns [j0, j1) of C.
GemmCall column_part(const GemmCall& g, int64_t r0, int64_t r1, int64_t j0, int64_t j1) {
  GemmCall part = g;
  part.triangle = {};
  part.m = r1 - r0;
  part.n = j1 - j0;
  part.a = g.a + (g.trans_a ? r0 : r0 * g.lda);
  part.b = g.b + (g.trans_b ? j0 * g.ldb : j0);
  part.c = g.c + r0 * g.ldc + j0;
  return part;
}

// C rows [r0, r1) = beta C (what the product adds when op(A)'s rows are all 0 there).
void scale_rows(const GemmCall& g, int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i) {
    real* row = g.c + i * g.ldc;
    if (g.beta == 0)
      std::fill_n(row, g.n, real(0));
    else
      for (int64_t j = 0; j < g.n; ++j) row[j] *= g.beta;
  }
}

// The edge of a triangle when even it does not pack (op(B) wider than small_gemm's panel): op(A)
// copied with its unread part zeroed, then one BLAS product.
void masked_edge(const GemmCall& e) {
  thread_local std::vector<real> buf;
  buf.resize(static_cast<size_t>(e.m * e.k));
  const int64_t d = e.triangle.diagonal;
  for (int64_t i = 0; i < e.m; ++i)
    for (int64_t p = 0; p < e.k; ++p) {
      const bool read = e.triangle.part == Part::kLowerA ? p <= i + d : p >= i + d;
      buf[i * e.k + p] = read ? (e.trans_a ? e.a[p * e.lda + i] : e.a[i * e.lda + p]) : 0;
    }
  GemmCall plain = e;
  plain.triangle = {};
  plain.trans_a = false;
  plain.a = buf.data();
  plain.lda = e.k;
  gemm(plain);
}

void edge(const GemmCall& e) {
  if (e.m == 0 || e.n == 0) return;
  if (small_gemm_fits(e)) return small_gemm(e);
  if (e.triangle.part == Part::kLowerC) return gemm(column_part(e, 0, e.m, 0, e.n));
  masked_edge(e);
}

}  // namespace

void triangle_gemm_by_blocks(const GemmCall& g) {
  const int64_t d = g.triangle.diagonal;
  for (int64_t r0 = 0; r0 < g.m; r0 += kTriangleBlockRows) {
    const int64_t r1 = std::min(g.m, r0 + kTriangleBlockRows);
    // For the block's rows the triangle's boundary runs from b0 (row r0) to b1 (row r1 - 1):
    // before b0 (or after b1) every row is in or every row is out.
    if (g.triangle.part == Part::kLowerC) {  // columns j <= i + d
      const int64_t b0 = std::clamp<int64_t>(r0 + d + 1, 0, g.n);
      const int64_t b1 = std::clamp<int64_t>(r1 + d, b0, g.n);
      if (b0 > 0) gemm(column_part(g, r0, r1, 0, b0));
      GemmCall e = column_part(g, r0, r1, b0, b1);
      e.triangle = {Part::kLowerC, r0 + d - b0};
      edge(e);
      continue;
    }
    const bool lower = g.triangle.part == Part::kLowerA;  // p <= i + d, else p >= i + d
    const int64_t b0 = std::clamp<int64_t>(r0 + d + (lower ? 1 : 0), 0, g.k);
    const int64_t b1 = std::clamp<int64_t>(r1 - 1 + d + (lower ? 1 : 0), b0, g.k);
    // lower: [0, b0) whole, [b0, b1) edge; upper: [b0, b1) edge, [b1, k) whole.
    const int64_t w0 = lower ? 0 : b1, w1 = lower ? b0 : g.k;
    if (w0 == w1 && b0 == b1) {
      scale_rows(g, r0, r1);
      continue;
    }
    GemmCall whole = inner_part(g, r0, r1, w0, w1);
    GemmCall e = inner_part(g, r0, r1, b0, b1);
    e.triangle = {g.triangle.part, r0 + d - b0};
    if (w0 < w1) {
      gemm(whole);
      e.beta = 1;  // the edge adds onto the rectangle's result
    }
    if (b0 < b1) edge(e);
  }
}

}  // namespace attn::kernels
