// The bookkeeping of causal attention's triangular products: which keys a query row sees, and
// how the (matrix, rows) work of a batch is shared between the threads.
//
//   CausalRows tri{.rows = tq, .cols = tk, .diagonal = tk - tq};   // row i sees j <= i + diag
//   parallel_triangles(matrices, tq, tq * tk * d, [&](int64_t mat, int64_t r0, int64_t r1) {
//     gemm({..., .m = r1 - r0, ..., .triangle = tri.triangle(Triangle::Part::kLowerC, r0)});
//   });
//
// In causal attention query i sees keys j < visible(i) = i + 1 + diagonal: the (Tq,Tk) score and
// weight matrices are zero, or never looked at, above that diagonal. The GEMMs take a Triangle
// (blas.h) and skip that half; these helpers give each job its rows.
#pragma once

#include <algorithm>
#include <cstdint>

#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"
#include "autograd/real.h"
#include "autograd/shape.h"

namespace attn::kernels {

struct CausalRows {
  int64_t rows = 0, cols = 0;  // the (rows, cols) matrix: queries by keys
  int64_t diagonal = 0;        // row i sees columns j <= i + diagonal (torch.tril's diagonal)

  // Columns row i sees: [0, visible(i)).
  int64_t visible(int64_t i) const { return std::clamp<int64_t>(i + diagonal + 1, 0, cols); }
  // [0, visible(i)) rounded up to whole vectors of 8 values, within the row: row loops over
  // this width run without a scalar remainder (the extra entries are made neutral).
  int64_t vector_width(int64_t i) const { return std::min(cols, (visible(i) + 7) / 8 * 8); }
  // Every row sees every column (no causal mask, or one query at the end of a KV cache): the
  // products are plain GEMMs.
  bool full() const { return diagonal >= cols - 1; }
  // The Triangle of a product over this matrix's rows from r0 on (kLowerA, kLowerC), or over its
  // columns from r0 on as the rows of the transposed product (kUpperA); none when full().
  Triangle triangle(Triangle::Part part, int64_t r0) const {
    if (full()) return {};
    return {part, part == Triangle::Part::kUpperA ? r0 - diagonal : diagonal + r0};
  }
};

// Grouped heads (GQA): for stacks a (..., H, r, c) and b (..., Hkv, r', c') of the same rank,
// the number g = H / Hkv of a's matrices that share one of b's (a's matrix m reads b's m / g,
// since a head h of batch entry n is matrix n H + h). 1 for rank 2. 0 when the leading axes
// differ elsewhere or Hkv does not divide H.
int64_t head_group(const Shape& a, const Shape& b);

// Jobs per matrix for parallel_triangles: 1 when there are enough matrices to keep
// kSplitThreads threads busy, else enough to give each two (at most one per 32 rows). Depends
// on the shapes and on whether it runs in a parallel body, never on the thread count.
int64_t triangle_jobs_per_matrix(int64_t matrices, int64_t rows);

// Calls fn(matrix, r0, r1) over row ranges covering rows [0, rows) of every matrix, in parallel.
// A matrix cut into J jobs is cut into 2J equal pieces and job c takes pieces c and 2J-1-c:
// in a triangle the rows' work grows (or shrinks) steadily, so each job gets the same amount.
template <class Fn>
void parallel_triangles(int64_t matrices, int64_t rows, int64_t work_per_matrix, Fn&& fn) {
  const int64_t per = triangle_jobs_per_matrix(matrices, rows);
  const int64_t pieces = 2 * per, len = (rows + pieces - 1) / pieces;
  parallel_for(matrices * per, work_per_matrix / per, [&](int64_t job) {
    const int64_t mat = job / per, c = job % per;
    if (per == 1) return fn(mat, int64_t{0}, rows);
    for (const int64_t piece : {c, pieces - 1 - c}) {
      const int64_t r0 = piece * len, r1 = std::min(rows, r0 + len);
      if (r0 < r1) fn(mat, r0, r1);
    }
  });
}

// Rows [r0, r1) of one (rows, cols) score matrix (row stride cols) become softmax rows over the
// columns each row sees; the hidden columns get weight exactly 0.
void softmax_visible_rows(const CausalRows& tri, real* scores, int64_t r0, int64_t r1);

// For every head kv of b:  c_kv (cols, n) = alpha sum over a's heads m reading it of
// tril(a_m)^T b_m, with a (matrices, rows, cols), b (matrices, rows, n), c (matrices/group, cols,
// n). Column j of a counts from row j - diagonal on. Causal attention's key (and value)
// gradient: dk = scale ds^T q summed over the query heads sharing the key head.
void grouped_tril_transposed_product(const CausalRows& tri,
                                     int64_t matrices,
                                     int64_t group,
                                     real alpha,
                                     const real* a,
                                     const real* b,
                                     int64_t n,
                                     real* c);

}  // namespace attn::kernels
