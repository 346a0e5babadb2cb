#include "autograd/kernels/small_gemm.h"
#include "autograd/kernels/isa_variant.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "autograd/kernels/pack.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/simd.h"

namespace attn::kernels::ATTN_ISA_NS {

namespace {

using namespace simd;

constexpr int kRows = 4;  // register block: kRows x kVecs vectors of C (8 accumulators)
constexpr int kVecs = 2;

// op(B) as a (K, n_pad) row-major panel, zero-padded to whole vectors, for this thread.
alignas(64) thread_local real t_panel[kSmallMaxPanel];

int64_t pack_b(bool trans_b, int64_t n, int64_t k, const real* b, int64_t ldb) {
  const int64_t n_pad = (n + kLanes - 1) / kLanes * kLanes;
  if (trans_b) pack_transposed(n, k, b, ldb, t_panel, n_pad);
  for (int64_t p = 0; p < k; ++p) {
    real* row = t_panel + p * n_pad;
    if (!trans_b) std::copy(b + p * ldb, b + p * ldb + n, row);
    std::fill(row + n, row + n_pad, real(0));
  }
  return n_pad;
}

// What every register block of one call shares.
struct Call {
  int64_t m, k;
  const real* a;
  int64_t a_row, a_col;  // A(r, p) = a[r * a_row + p * a_col]: (lda, 1), or (1, lda) transposed
  const real* panel;     // op(B)(p, j) = panel[p * n_pad + j]: the packed copy, or B itself
  int64_t n_pad;
  real alpha, beta;
  real* c;
  int64_t ldc;
  Triangle triangle;
  const SoftmaxBackwardStore* softmax_store;  // or none: C = alpha acc + beta C
};

// The inner indices p that row i of op(A) reads: all of [0, k), or the part its triangle keeps.
struct Span {
  int64_t lo, hi;
};
[[gnu::always_inline]] inline Span span_of(const Call& call, int64_t i) {
  const int64_t d = call.triangle.diagonal;
  switch (call.triangle.part) {
    case Triangle::Part::kLowerA:
      return {0, std::clamp<int64_t>(i + d + 1, 0, call.k)};
    case Triangle::Part::kUpperA:
      return {std::clamp<int64_t>(i + d, 0, call.k), call.k};
    default:
      return {0, call.k};
  }
}

// C = P o (acc - dot_row) for one register block (SoftmaxBackwardStore).
template <int ROWS, int VECS>
void store_softmax_backward(
    const Call& call, const Vec (&acc)[ROWS][VECS], int64_t i, int64_t j, int64_t cols) {
  const SoftmaxBackwardStore& s = *call.softmax_store;
  for (int r = 0; r < ROWS; ++r) {
    real* row = call.c + (i + r) * call.ldc + j;
    const real* p = s.p + (i + r) * s.ldp + j;
    const real dot = s.dot[i + r];
    if (cols == VECS * kLanes) {
      const Vec vdot = vset(dot);
      for (int v = 0; v < VECS; ++v)
        vstore(row + v * kLanes, vmul(vload(p + v * kLanes), vsub(acc[r][v], vdot)));
    } else {
      alignas(32) real tail[VECS * kLanes];
      for (int v = 0; v < VECS; ++v) vstore(tail + v * kLanes, acc[r][v]);
      for (int64_t c = 0; c < cols; ++c) row[c] = p[c] * (tail[c] - dot);
    }
  }
}

// C rows [i, i + ROWS) x columns [j, j + cols) of one register block, cols <= VECS * kLanes:
// acc(r, :) = sum_p A(i + r, p) * panel(p, j:), then C = alpha acc + beta C (or, with
// SOFTMAX_STORE, C = P o (acc - dot): store_softmax_backward). Where the rows' spans of p differ
// (the edge of a triangle), those few p are read per row and 0 elsewhere; the stretch all rows
// share runs without any test.
template <int ROWS, int VECS, bool SOFTMAX_STORE>
void register_block(const Call& call, int64_t i, int64_t j, int64_t cols) {
  Span span[ROWS]{};  // read only when the rows differ (a triangle)
  int64_t begin = 0, mid_lo = 0, mid_hi = call.k, end = call.k;  // no triangle: all of [0, k)
  if (call.triangle.part != Triangle::Part::kAll) {
    begin = call.k, end = 0;
    for (int r = 0; r < ROWS; ++r) {
      span[r] = span_of(call, i + r);
      begin = std::min(begin, span[r].lo), mid_lo = std::max(mid_lo, span[r].lo);
      mid_hi = std::min(mid_hi, span[r].hi), end = std::max(end, span[r].hi);
    }
    mid_hi = std::max(mid_lo, mid_hi);
  }
  const real* a = call.a + i * call.a_row;
  const real* panel = call.panel + j;
  Vec acc[ROWS][VECS];
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < VECS; ++v) acc[r][v] = vzero();
  auto step = [&](int64_t p, auto masked) {
    Vec bv[VECS];
    for (int v = 0; v < VECS; ++v) bv[v] = vload(panel + p * call.n_pad + v * kLanes);
    for (int r = 0; r < ROWS; ++r) {
      real ar = 0;
      if (!masked || (p >= span[r].lo && p < span[r].hi)) ar = a[r * call.a_row + p * call.a_col];
      const Vec s = vset(ar);
      for (int v = 0; v < VECS; ++v) acc[r][v] = vfma(s, bv[v], acc[r][v]);
    }
  };
  for (int64_t p = begin; p < mid_lo; ++p) step(p, std::true_type{});
  for (int64_t p = mid_lo; p < mid_hi; ++p) step(p, std::false_type{});
  for (int64_t p = mid_hi; p < end; ++p) step(p, std::true_type{});
  if constexpr (SOFTMAX_STORE) return store_softmax_backward<ROWS, VECS>(call, acc, i, j, cols);
  const Vec va = vset(call.alpha), vb = vset(call.beta);
  const real beta = call.beta;
  for (int r = 0; r < ROWS; ++r) {
    real* row = call.c + (i + r) * call.ldc + j;
    if (cols == VECS * kLanes) {
      for (int v = 0; v < VECS; ++v) {
        Vec out = vmul(va, acc[r][v]);
        if (beta != 0) out = vfma(vb, vload(row + v * kLanes), out);  // beta 0: C is not read
        vstore(row + v * kLanes, out);
      }
    } else {
      alignas(32) real tail[VECS * kLanes];
      for (int v = 0; v < VECS; ++v) vstore(tail + v * kLanes, vmul(va, acc[r][v]));
      for (int64_t c = 0; c < cols; ++c) row[c] = beta != 0 ? tail[c] + beta * row[c] : tail[c];
    }
  }
}

// Columns [0, n) of rows [i, i + ROWS): blocks of kVecs vectors, then one vector at a time.
// With a kLowerC triangle, only as far right as the block's last row needs, rounded up to a
// whole block: C's hidden entries may be written (blas.h), and a narrower block would take as
// long (its fewer accumulators wait on the same chain of fused multiply-adds, one per step).
// With the softmax-backward store, the next row block's lines of P are requested first: the
// store reads P a tile at a time, and P (the forward's weights) comes from memory.
template <int ROWS, bool SOFTMAX_STORE>
void row_block(const Call& call, int64_t i, int64_t n) {
  constexpr int64_t kBlock = kVecs * kLanes;
  const int64_t all_columns = n;
  if (call.triangle.part == Triangle::Part::kLowerC) {
    const int64_t needed = std::max<int64_t>(i + ROWS + call.triangle.diagonal, 0);
    n = std::min(n, (needed + kBlock - 1) / kBlock * kBlock);
  }
  if constexpr (SOFTMAX_STORE) {
    constexpr int64_t kLineValues = 64 / sizeof(real);
    const int64_t next_n = std::min(all_columns, n + kBlock);
    for (int64_t r = i + ROWS; r < std::min(call.m, i + 2 * ROWS); ++r)
      for (int64_t c = 0; c < next_n; c += kLineValues)
        __builtin_prefetch(call.softmax_store->p + r * call.softmax_store->ldp + c);
  }
  int64_t j = 0;
  for (; j + kBlock <= n; j += kBlock)
    register_block<ROWS, kVecs, SOFTMAX_STORE>(call, i, j, kBlock);
  for (; j < n; j += kLanes)
    register_block<ROWS, 1, SOFTMAX_STORE>(call, i, j, std::min<int64_t>(kLanes, n - j));
}

}  // namespace

bool small_gemm_fits(const GemmCall& g) {
  const int64_t n_pad = (g.n + kLanes - 1) / kLanes * kLanes;  // the panel's row length
  if (n_pad * g.k > kSmallMaxPanel) return false;
  // A triangle's blocks are cut to its shape here, which BLAS cannot do: any size that packs.
  if (g.triangle.part != Triangle::Part::kAll) return true;
  if (g.m < kSmallMinM || g.n > kSmallMaxN || g.k > kSmallMaxK) return false;
  return g.m * g.n * g.k <= kSmallMaxSerialMNK || in_parallel_body();
}

namespace {

// The store is a template parameter: the plain product's blocks compile as if it did not exist.
template <bool SOFTMAX_STORE>
void run_small_gemm(const GemmCall& g, const SoftmaxBackwardStore* softmax_store) {
  // k = 0: an empty sum, so C = beta C. A and B hold no elements and their pointers may be null;
  // the blocks below would still offset them by their row and column (undefined behaviour on a
  // null pointer, which UBSan reports), so the empty product is finished here. beta = 0 writes
  // zeros without reading C, as BLAS does.
  if (!SOFTMAX_STORE && g.k == 0 && g.triangle.part == Triangle::Part::kAll) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        real& c = g.c[i * g.ldc + j];
        c = g.beta == 0 ? real(0) : g.beta * c;
      }
    return;
  }
  // B's rows are already a panel when B is not transposed and every row is whole vectors (the
  // blocks never read past column n): read them in place, at B's row stride.
  const bool in_place = !g.trans_b && g.n % kLanes == 0;
  const int64_t n_pad = in_place ? g.ldb : pack_b(g.trans_b, g.n, g.k, g.b, g.ldb);
  const Call call{.m = g.m,
                  .k = g.k,
                  .a = g.a,
                  .a_row = g.trans_a ? 1 : g.lda,
                  .a_col = g.trans_a ? g.lda : 1,
                  .panel = in_place ? g.b : t_panel,
                  .n_pad = n_pad,
                  .alpha = g.alpha,
                  .beta = g.beta,
                  .c = g.c,
                  .ldc = g.ldc,
                  .triangle = g.triangle,
                  .softmax_store = softmax_store};
  int64_t i = 0;
  for (; i + kRows <= g.m; i += kRows) row_block<kRows, SOFTMAX_STORE>(call, i, g.n);
  switch (g.m - i) {
    case 3:
      return row_block<3, SOFTMAX_STORE>(call, i, g.n);
    case 2:
      return row_block<2, SOFTMAX_STORE>(call, i, g.n);
    case 1:
      return row_block<1, SOFTMAX_STORE>(call, i, g.n);
    default:
      return;
  }
}

}  // namespace

void small_gemm(const GemmCall& g) {
  run_small_gemm<false>(g, nullptr);
}

void small_gemm_softmax_store(const GemmCall& g, const SoftmaxBackwardStore& store) {
  if (g.alpha != 1 || g.beta != 0)
    throw std::invalid_argument("small_gemm: the softmax-backward store needs alpha 1, beta 0");
  run_small_gemm<true>(g, &store);
}

}  // namespace attn::kernels::ATTN_ISA_NS
