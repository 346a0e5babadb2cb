#include "autograd/kernels/causal_blocks.h"

#include <algorithm>

#include "autograd/kernels/vec_math.h"

namespace attn::kernels {

int64_t head_group(const Shape& a, const Shape& b) {
  const size_t r = a.size();
  if (r < 2 || b.size() != r) return 0;
  if (r == 2) return 1;
  if (!std::equal(a.begin(), a.end() - 3, b.begin())) return 0;
  const int64_t h = a[r - 3], hkv = b[r - 3];
  return hkv > 0 && h % hkv == 0 ? h / hkv : (h == 0 && hkv == 0 ? 1 : 0);
}

int64_t triangle_jobs_per_matrix(int64_t matrices, int64_t rows) {
  // Sized for kSplitThreads, not num_threads(): a matrix's row ranges change which products
  // (and so which additions) compute its rows, and they must not change with the thread count.
  const int64_t threads = in_parallel_body() ? 1 : kSplitThreads;
  if (matrices >= 2 * threads) return 1;
  const int64_t wanted = (2 * threads + matrices - 1) / std::max<int64_t>(matrices, 1);
  return std::clamp<int64_t>(wanted, 1, std::max<int64_t>(1, rows / 32));
}

void softmax_visible_rows(const CausalRows& tri, real* scores, int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i)
    softmax_prefix_row(scores + i * tri.cols, tri.visible(i), tri.cols);
}

void grouped_tril_transposed_product(const CausalRows& tri,
                                     int64_t matrices,
                                     int64_t group,
                                     real alpha,
                                     const real* a,
                                     const real* b,
                                     int64_t n,
                                     real* c) {
  const int64_t rows = tri.rows, cols = tri.cols;
  parallel_triangles(
      matrices / group, cols, group * rows * cols * n, [&](int64_t kv, int64_t c0, int64_t c1) {
        for (int64_t m = kv * group; m < (kv + 1) * group; ++m)  // in order: beta 0, then 1
          gemm({.trans_a = true,
                .m = c1 - c0,
                .n = n,
                .k = rows,
                .alpha = alpha,
                .a = a + m * rows * cols + c0,
                .lda = cols,
                .b = b + m * rows * n,
                .ldb = n,
                .beta = real(m == kv * group ? 0 : 1),
                .c = c + (kv * cols + c0) * n,
                .ldc = n,
                .triangle = tri.triangle(Triangle::Part::kUpperA, c0)});
      });
}

}  // namespace attn::kernels
