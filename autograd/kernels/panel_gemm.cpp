#include "autograd/kernels/panel_gemm.h"
#include "autograd/kernels/isa_variant.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include "autograd/kernels/blas.h"
#include "autograd/kernels/buffer_pool.h"
#include "autograd/kernels/pack.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/simd.h"

namespace attn::kernels::ATTN_ISA_NS {

namespace {

using namespace simd;

// Plain BLAS (gemm_split: small_gemm where that fits) with the extras as separate passes: for
// builds without AVX2/FMA (the Debug build), where the register kernel would be a slow
// emulation, and for products too small or too narrow to pay for packing the weight.
void panel_gemm_by_blas(const PanelGemm& g) {
  if (g.row_init)
    for (int64_t i = 0; i < g.rows; ++i) {
      real* row = g.c + i * g.ldc;
      for (int64_t j = 0; j < g.n; ++j)
        row[j] = g.accumulate ? row[j] + g.row_init[j] : g.row_init[j];
    }
  if (g.col_sums) {
    std::fill(g.col_sums, g.col_sums + g.k, real(0));
    for (int64_t i = 0; i < g.rows; ++i)
      for (int64_t p = 0; p < g.k; ++p) g.col_sums[p] += g.a[i * g.lda + p];
  }
  gemm_split({.trans_b = g.b_transposed,
              .m = g.rows,
              .n = g.n,
              .k = g.k,
              .a = g.a,
              .lda = g.lda,
              .b = g.b,
              .ldb = g.ldb,
              .beta = real(g.accumulate || g.row_init ? 1 : 0),
              .c = g.c,
              .ldc = g.ldc});
  for (int64_t i = 0; i < g.rows; ++i) {
    real* row = g.c + i * g.ldc;
    if (g.relu)
      for (int64_t j = 0; j < g.n; ++j) row[j] = std::max(row[j], real(0));
    if (g.scale)
      for (int64_t j = 0; j < g.n; ++j) row[j] *= g.scale[i * g.ld_scale + j];
  }
}

#if defined(__AVX2__) && defined(__FMA__)

// Rows of C per register block: 2 kRows accumulators, plus two panel vectors and a broadcast.
// 6 (12 of AVX2's 16 registers), or 12 with AVX-512 (24 of its 32; 14, the most that fit,
// would not divide kSumGroup).
constexpr int kRows = kLanes * sizeof(real) == 64 ? 12 : 6;
constexpr int64_t kWidth = 2 * kLanes;  // columns per panel and per register block (16 floats)
// k values per pass: one panel's slice, kDepth x kWidth, stays in L1 (16 KiB) while a chunk of
// rows passes over it: 256 for AVX2's 16-float panels, 128 for AVX-512's 32.
constexpr int64_t kDepth = 16384 / (kWidth * int64_t(sizeof(real)));
// Rows of A per chunk: kRowChunk x kDepth values (72 KiB in float with AVX2) stay in L2 while
// every panel passes over them.
constexpr int64_t kRowChunk = 72;

// Rows per group of the column sums (PanelGemm::col_sums): each group's partial sums are made in
// row order by one thread; threads and chunks start at multiples of it, so the groups, and the
// sums, do not depend on the split.
constexpr int64_t kSumGroup = 24;
static_assert(kSumGroup % kRows == 0 && kRowChunk % kSumGroup == 0);

// Below this many rows of C the weight's packing is not paid back: plain BLAS.
constexpr int64_t kMinRows = 16;

alignas(64) constexpr real kZeros[kWidth] = {};

struct Block {
  int64_t depth;      // k values in this pass
  const real* a;      // A at this block's first row and this pass's first column
  int64_t lda;        //
  const real* panel;  // this pass's slice of one panel: depth rows of kWidth
  // Where the accumulators start: row r from init + r * init_ld (C itself with ldc, the bias
  // with 0, or kZeros with 0), so the start is one load per accumulator whatever it is.
  const real* init;
  int64_t init_ld;
  real* c;            // C at the block's first row and the panel's first column
  int64_t ldc;        //
  real floor;         // the store writes max(floor, acc): 0 for the ReLU, else -inf
  const real* scale;  // or it writes acc * S, S's row r at scale + r * scale_ld (PanelGemm)
  int64_t scale_ld;   //
  const real* next;   // A at the next block's first row, to prefetch; or none
};

// C rows [0, ROWS) x kWidth columns of one block: acc = init + sum_p A(r, p) panel(p, :).
// Per p: two panel loads, ROWS broadcasts from A's rows, 2 ROWS fused multiply-adds.
template <int ROWS>
void register_block(const Block& blk) {
  Vec acc[ROWS][2];
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < 2; ++v) acc[r][v] = vload(blk.init + r * blk.init_ld + v * kLanes);
  const real* a = blk.a;
  const int64_t lda = blk.lda;
  const real* panel = blk.panel;
  auto step = [&](int64_t p) {
    const Vec b0 = vload(panel + p * kWidth), b1 = vload(panel + p * kWidth + kLanes);
    for (int r = 0; r < ROWS; ++r) {
      const Vec s = vset(a[r * lda + p]);
      acc[r][0] = vfma(s, b0, acc[r][0]);
      acc[r][1] = vfma(s, b1, acc[r][1]);
    }
  };
  // A is read where it lies, often from memory (a saved activation): while this block runs, the
  // next block's rows are requested, one cache line per row every kLineValues steps.
  constexpr int64_t kLineValues = 64 / sizeof(real);
  int64_t p0 = 0;
  for (; p0 + kLineValues <= blk.depth; p0 += kLineValues) {
    if (blk.next)
      for (int r = 0; r < ROWS; ++r) __builtin_prefetch(blk.next + r * lda + p0);
    for (int64_t u = 0; u < kLineValues; ++u) step(p0 + u);
  }
  for (int64_t p = p0; p < blk.depth; ++p) step(p);
  // max(floor, acc), in this order: a NaN in acc is kept (the second operand wins a NaN
  // comparison), as torch.relu keeps it.
  if (blk.scale) {
    for (int r = 0; r < ROWS; ++r)
      for (int v = 0; v < 2; ++v)
        vstore(blk.c + r * blk.ldc + v * kLanes,
               vmul(acc[r][v], vload(blk.scale + r * blk.scale_ld + v * kLanes)));
    return;
  }
  const Vec floor = vset(blk.floor);
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < 2; ++v) vstore(blk.c + r * blk.ldc + v * kLanes, vmax(floor, acc[r][v]));
}

// register_block<rows>, for 1 <= rows <= kRows.
template <size_t... R>
void register_block_rows(int rows, const Block& blk, std::index_sequence<R...>) {
  using Kernel = void (*)(const Block&);
  static constexpr Kernel kernels[] = {register_block<int(R) + 1>...};
  kernels[rows - 1](blk);
}
void register_block_rows(int rows, const Block& blk) {
  register_block_rows(rows, blk, std::make_index_sequence<kRows>{});
}

// A block whose panel is only partly inside C (cols < kWidth): computed into a full-width
// scratch block, then its first cols columns copied out.
void partial_block(int rows, int64_t cols, Block blk) {
  alignas(64) real scratch[kRows * kWidth] = {};
  alignas(64) real scale[kRows * kWidth] = {};
  if (blk.init != kZeros)
    for (int r = 0; r < rows; ++r)
      std::copy(blk.init + r * blk.init_ld, blk.init + r * blk.init_ld + cols,
                scratch + r * kWidth);
  if (blk.scale) {
    for (int r = 0; r < rows; ++r)
      std::copy(blk.scale + r * blk.scale_ld, blk.scale + r * blk.scale_ld + cols,
                scale + r * kWidth);
    blk.scale = scale, blk.scale_ld = kWidth;
  }
  real* c = blk.c;
  const int64_t ldc = blk.ldc;
  if (blk.init != kZeros) blk.init = scratch, blk.init_ld = kWidth;
  blk.c = scratch, blk.ldc = kWidth;
  register_block_rows(rows, blk);
  for (int r = 0; r < rows; ++r)
    std::copy(scratch + r * kWidth, scratch + r * kWidth + cols, c + r * ldc);
}

// B as panels: panel q holds B's columns [q kWidth, (q + 1) kWidth) as k rows of kWidth values,
// zero past column n; panel q starts at q * k * kWidth.
void pack_panel(const PanelGemm& g, int64_t q, real* panels) {
  real* dst = panels + q * g.k * kWidth;
  const int64_t j0 = q * kWidth, cols = std::min(kWidth, g.n - j0);
  if (g.b_transposed) {
    pack_transposed(cols, g.k, g.b + j0 * g.ldb, g.ldb, dst, kWidth);
  } else {
    for (int64_t p = 0; p < g.k; ++p)
      std::copy(g.b + p * g.ldb + j0, g.b + p * g.ldb + j0 + cols, dst + p * kWidth);
  }
  if (cols < kWidth)
    for (int64_t p = 0; p < g.k; ++p)
      std::fill(dst + p * kWidth + cols, dst + (p + 1) * kWidth, real(0));
}

// The partial column sums of A's rows [i0, i1) (whole groups from i0 on), columns [k0, k0 +
// depth): group r / kSumGroup's at partial + group * k, its rows added in order. 64 columns at a
// time are summed down a group's rows in registers and stored once (a load, add and store of the
// sums per row cost more than the additions).
void add_to_group_sums(
    const PanelGemm& g, real* partial, int64_t i0, int64_t i1, int64_t k0, int64_t depth) {
  constexpr int kVecs = 8;
  constexpr int64_t kColumns = kVecs * kLanes;
  for (int64_t g0 = i0, g1; g0 < i1; g0 = g1) {
    g1 = std::min(i1, (g0 / kSumGroup + 1) * kSumGroup);
    const real* first = g.a + g0 * g.lda + k0;
    real* sums = partial + (g0 / kSumGroup) * g.k + k0;
    int64_t p = 0;
    for (; p + kColumns <= depth; p += kColumns) {
      Vec acc[kVecs];
      for (int v = 0; v < kVecs; ++v) acc[v] = vload(first + p + v * kLanes);
      for (int64_t i = g0 + 1; i < g1; ++i)
        for (int v = 0; v < kVecs; ++v)
          acc[v] = vadd(acc[v], vload(first + (i - g0) * g.lda + p + v * kLanes));
      for (int v = 0; v < kVecs; ++v) vstore(sums + p + v * kLanes, acc[v]);
    }
    for (; p < depth; ++p) {
      real sum = first[p];
      for (int64_t i = g0 + 1; i < g1; ++i) sum += first[(i - g0) * g.lda + p];
      sums[p] = sum;
    }
  }
}

// Rows [row_lo, row_hi) of C, all columns: passes over k, chunks of rows, panels, blocks; with
// column sums, each chunk's rows are added to their groups' partials after the first panel
// (which brought them into cache).
void compute_rows(
    const PanelGemm& g, const real* panels, real* partial, int64_t row_lo, int64_t row_hi) {
  const int64_t panel_count = (g.n + kWidth - 1) / kWidth;
  for (int64_t k0 = 0; k0 < g.k; k0 += kDepth) {
    const int64_t depth = std::min(kDepth, g.k - k0);
    const bool first = k0 == 0, last = k0 + depth == g.k;
    // The first pass starts from the bias or from zero, unless C is accumulated into; later
    // passes continue from what the previous one stored.
    const bool from_c = !first || g.accumulate, from_row = !from_c && g.row_init;
    for (int64_t i0 = row_lo; i0 < row_hi; i0 += kRowChunk) {
      const int64_t i1 = std::min(row_hi, i0 + kRowChunk);
      for (int64_t q = 0; q < panel_count; ++q) {
        const int64_t j0 = q * kWidth, cols = std::min(kWidth, g.n - j0);
        for (int64_t i = i0; i < i1; i += kRows) {
          const int rows = int(std::min<int64_t>(kRows, i1 - i));
          real* c = g.c + i * g.ldc + j0;
          const Block blk{
              .depth = depth,
              .a = g.a + i * g.lda + k0,
              .lda = g.lda,
              .panel = panels + q * g.k * kWidth + k0 * kWidth,
              .init = from_c     ? c
                      : from_row ? g.row_init + j0
                                 : kZeros,
              .init_ld = from_c ? g.ldc : 0,
              .c = c,
              .ldc = g.ldc,
              .floor = g.relu && last ? real(0) : -std::numeric_limits<real>::infinity(),
              .scale = g.scale && last ? g.scale + i * g.ld_scale + j0 : nullptr,
              .scale_ld = g.ld_scale,
              // The first panel's pass brings A's rows in; the other panels find them in cache.
              .next = q == 0 ? g.a + (i + kRows) * g.lda + k0 : nullptr};
          // C's lines for the next block of rows, requested now: they are read (a start from
          // C) or written a whole block of work later, instead of missing then.
          for (int r = 0; r < kRows; ++r) __builtin_prefetch(blk.c + (kRows + r) * g.ldc, 1);
          if (cols == kWidth)
            register_block_rows(rows, blk);
          else
            partial_block(rows, cols, blk);
        }
        if (q == 0 && partial) add_to_group_sums(g, partial, i0, i1, k0, depth);
      }
    }
  }
}

#endif  // AVX2 and FMA

}  // namespace

namespace {

void check_options(const PanelGemm& g) {
  if (g.scale && (g.row_init || g.accumulate || g.relu))
    throw std::invalid_argument(
        "panel_gemm: scale goes with neither row_init, accumulate nor relu");
}

#if defined(__AVX2__) && defined(__FMA__)
// Few rows: packing the weight would cost about as much as the product itself. Fewer columns
// than one panel (a layer 8 or 16 wide): every block would be a partial_block, computing the
// whole panel width into scratch and copying part of it out; small_gemm's blocks are one
// register wide instead. Measured (attn_gemm_shapes, one thread): a (512,8) x (8,8)^T layer ran
// at 10.7 GFLOP/s here against 43 by BLAS.
bool takes_blas(const PanelGemm& g) {
  return g.rows < kMinRows || g.k == 0 || g.n < kWidth || (g.row_init && g.accumulate);
}

// The weight as panels, packed by the threads together, in a pooled buffer of *bytes.
real* packed_panels(const PanelGemm& g, int64_t* bytes) {
  const int64_t panel_count = (g.n + kWidth - 1) / kWidth;
  *bytes = panel_count * g.k * kWidth * int64_t(sizeof(real));
  real* panels = static_cast<real*>(pool_allocate(*bytes));
  parallel_for(panel_count, g.k * kWidth, [&](int64_t q) { pack_panel(g, q, panels); });
  return panels;
}

// col_sums = the groups' partial sums added in group order (the same whoever made them).
void finish_col_sums(const PanelGemm& g, const real* partial) {
  const int64_t groups = (g.rows + kSumGroup - 1) / kSumGroup;
  parallel_chunks(g.k, groups, [&](int64_t p0, int64_t count) {
    real* out = g.col_sums + p0;
    std::copy(partial + p0, partial + p0 + count, out);
    for (int64_t grp = 1; grp < groups; ++grp) {
      const real* part = partial + grp * g.k + p0;
#pragma omp simd
      for (int64_t p = 0; p < count; ++p) out[p] += part[p];
    }
  });
}

int64_t partial_sum_bytes(const PanelGemm& g) {
  const int64_t groups = (g.rows + kSumGroup - 1) / kSumGroup;
  return g.col_sums ? groups * g.k * int64_t(sizeof(real)) : 0;
}
#endif

}  // namespace

void shared_panel_gemm_start(SharedPanelGemm::State& s) {
  const PanelGemm& g = s.g;
  check_options(g);
  if (g.rows == 0 || g.n == 0) return;
#if defined(__AVX2__) && defined(__FMA__)
  if (takes_blas(g)) return;
  s.kernel = true;
  s.panels = packed_panels(g, &s.panel_bytes);
  s.partial_bytes = partial_sum_bytes(g);
  if (s.partial_bytes) s.partial = static_cast<real*>(pool_allocate(s.partial_bytes));
  s.chunks = (g.rows + kRowChunk - 1) / kRowChunk;
#endif
}

void shared_panel_gemm_run(SharedPanelGemm::State& s) {
  if (!s.kernel) {
    if (s.g.rows > 0 && s.g.n > 0 && s.next.fetch_add(1) == 0) panel_gemm_by_blas(s.g);
    return;
  }
#if defined(__AVX2__) && defined(__FMA__)
  // Chunks start at multiples of kRowChunk, whole sum groups: any thread may take any chunk.
  for (int64_t c = s.next.fetch_add(1); c < s.chunks; c = s.next.fetch_add(1))
    compute_rows(s.g, s.panels, s.partial, c * kRowChunk, std::min(s.g.rows, (c + 1) * kRowChunk));
#endif
}

void shared_panel_gemm_finish(SharedPanelGemm::State& s) {
#if defined(__AVX2__) && defined(__FMA__)
  if (!s.kernel) return;
  pool_release(s.panels, s.panel_bytes);
  if (!s.partial) return;
  finish_col_sums(s.g, s.partial);
  pool_release(s.partial, s.partial_bytes);
#endif
}

void panel_gemm(const PanelGemm& g) {
  check_options(g);
  if (g.rows == 0 || g.n == 0) return;
#if !(defined(__AVX2__) && defined(__FMA__))
  return panel_gemm_by_blas(g);
#else
  if (takes_blas(g)) return panel_gemm_by_blas(g);
  int64_t panel_bytes = 0;
  real* panels = packed_panels(g, &panel_bytes);
  // One block of whole sum groups (of whole register blocks) per thread: every row of C is
  // computed by the same sequence of operations whatever the split, so the result does not
  // depend on the threads.
  const int64_t threads = in_parallel_body() ? 1 : num_threads();
  const int64_t per_thread = (g.rows + threads - 1) / threads;
  const int64_t block = (per_thread + kSumGroup - 1) / kSumGroup * kSumGroup;
  const int64_t blocks = (g.rows + block - 1) / block;
  const int64_t partial_bytes = partial_sum_bytes(g);
  real* partial = g.col_sums ? static_cast<real*>(pool_allocate(partial_bytes)) : nullptr;
  parallel_for(blocks, block * g.n * g.k, [&](int64_t t) {
    compute_rows(g, panels, partial, t * block, std::min(g.rows, (t + 1) * block));
  });
  pool_release(panels, panel_bytes);
  if (!partial) return;
  finish_col_sums(g, partial);
  pool_release(partial, partial_bytes);
#endif
}

}  // namespace attn::kernels::ATTN_ISA_NS
