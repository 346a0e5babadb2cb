// The matrix products the chapter experiments spend their time in, timed one at a time on one
// thread, by our kernels and by OpenBLAS:
//
//   build/release/attn_gemm_shapes            # a table: GFLOP/s per CPU second, both ways
//   build/release/attn_gemm_shapes --json     # the same as JSON (bench/peak_fraction.py
//                                             # --gemm-shapes reads it against the FMA peak)
//
// Why: a profile of the whole catalogue at its defaults puts 40-65% of the time in matrix
// products (docs/performance.md). How much faster the catalogue can get depends on how far these
// products are from the CPU's peak, so this measures them at the experiments' own sizes (small
// widths, d_model 8-96 and heads of 8-16, over 512-8192 rows), not at W4's.
//
// "ours" is what the ops call: kernels::panel_gemm for a linear layer's forward (x W^T + b),
// kernels::gemm for the weight gradient (dy^T x) and attention's per-head products. One thread, as
// in the experiments' side-by-side jobs (experiments/kit/side_by_side.h). Rates are per second of
// CPU time (CLOCK_PROCESS_CPUTIME_ID), the best of 5 runs of 10^9 flops each, so time slices that
// other programs take are not counted.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "autograd/kernels/blas.h"
#include "autograd/kernels/isa.h"
#include "autograd/kernels/panel_gemm.h"

namespace {

using attn::real;

// C (m, n) = op(A) (m, k) op(B) (k, n); `linear` marks a layer's forward product, which the op
// computes with panel_gemm (B the weight, stored (n, k): trans_b).
struct Shape {
  const char* where;
  bool trans_a, trans_b;
  int64_t m, n, k;
  bool linear;
};

// The experiments' products (defaults). Rows = batch x positions.
const Shape kShapes[] = {
    {"sparse-challenge: projection, d 32, 32x256 rows", false, true, 8192, 32, 32, true},
    {"sparse-challenge: FFN up, 32 -> 128", false, true, 8192, 128, 32, true},
    {"sparse-challenge: FFN down, 128 -> 32", false, true, 8192, 32, 128, true},
    {"sparse-challenge: weight gradient, 32x32 over 8192 rows", true, false, 32, 32, 8192, false},
    {"scaling-law: projection, d 96, 16x32 rows", false, true, 512, 96, 96, true},
    {"scaling-law: FFN up, 96 -> 384", false, true, 512, 384, 96, true},
    {"scaling-law: FFN down, 384 -> 96", false, true, 512, 96, 384, true},
    {"scaling-law: weight gradient, 384x96 over 512 rows", true, false, 384, 96, 512, false},
    {"scaling-law: projection, d 32", false, true, 512, 32, 32, true},
    {"scaling-law: projection, d 8", false, true, 512, 8, 8, true},
    {"scaling-law: projection, d 16", false, true, 512, 16, 16, true},
    {"scaling-law: FFN up, 8 -> 32", false, true, 512, 32, 8, true},
    {"scaling-law: FFN down, 32 -> 8", false, true, 512, 8, 32, true},
    {"scaling-law: weight gradient, 8x32 over 512 rows", true, false, 8, 32, 512, false},
    {"head scores, T 32, head 8: Q K^T", false, true, 32, 32, 8, false},
    {"head output, T 32, head 8: P V", false, false, 32, 8, 32, false},
    {"head scores, T 256, head 16: Q K^T", false, true, 256, 256, 16, false},
    {"head output, T 256, head 16: P V", false, false, 256, 16, 256, false},
};

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// GFLOP/s per CPU second of f(), the best of 5 runs of enough calls for 10^9 flops each (5-50 ms
// at the rates measured here).
template <class F>
double rate(double flops, F&& f) {
  f();  // warm: buffers, packing space, caches
  const int calls = std::max(1, static_cast<int>(1e9 / flops));
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const double t0 = cpu_seconds();
    for (int c = 0; c < calls; ++c) f();
    best = std::max(best, flops * calls / (cpu_seconds() - t0) / 1e9);
  }
  return best;
}

struct Row {
  const Shape* shape;
  double ours, openblas;
};

Row measure(const Shape& s) {
  const int64_t lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n;
  std::vector<real> a(static_cast<size_t>(s.m * s.k), real(0.5)),
      b(static_cast<size_t>(s.k * s.n), real(0.25)), c(static_cast<size_t>(s.m * s.n)),
      bias(static_cast<size_t>(s.n), real(0.1));
  const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
  auto ours = [&] {
    if (s.linear) {
      attn::kernels::panel_gemm({.rows = s.m,
                                 .k = s.k,
                                 .n = s.n,
                                 .a = a.data(),
                                 .lda = lda,
                                 .b = b.data(),
                                 .ldb = ldb,
                                 .b_transposed = true,
                                 .row_init = bias.data(),
                                 .c = c.data(),
                                 .ldc = s.n});
    } else {
      attn::kernels::gemm({.trans_a = s.trans_a,
                           .trans_b = s.trans_b,
                           .m = s.m,
                           .n = s.n,
                           .k = s.k,
                           .a = a.data(),
                           .lda = lda,
                           .b = b.data(),
                           .ldb = ldb,
                           .c = c.data(),
                           .ldc = s.n});
    }
  };
  auto openblas = [&] {
    cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans,
                s.trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(s.m), static_cast<int>(s.n),
                static_cast<int>(s.k), 1.0f, a.data(), static_cast<int>(lda), b.data(),
                static_cast<int>(ldb), 0.0f, c.data(), static_cast<int>(s.n));
  };
  return {&s, rate(flops, ours), rate(flops, openblas)};
}

}  // namespace

int main(int argc, char** argv) {
  const bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  omp_set_num_threads(1);
  const char* isa = attn::kernels::isa_name(attn::kernels::active_isa());
  std::vector<Row> rows;
  for (const Shape& s : kShapes) rows.push_back(measure(s));
  if (json) {  // {"isa": "avx512", "shapes": [{"where": ..., "m": .., "ours": GFLOP/s, ...}]}
    std::printf("{\"isa\": \"%s\", \"shapes\": [", isa);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Shape& s = *rows[i].shape;
      std::printf(
          "%s{\"where\": \"%s\", \"op\": \"%c%c\", \"m\": %ld, \"n\": %ld, \"k\": %ld, "
          "\"ours\": %.2f, \"openblas\": %.2f}",
          i ? ", " : "", s.where, s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', long(s.m),
          long(s.n), long(s.k), rows[i].ours, rows[i].openblas);
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("kernels %s, 1 thread, GFLOP/s per CPU second\n", isa);
  std::printf("%-58s %2s %5s %4s %5s %8s %8s\n", "product", "op", "m", "n", "k", "ours",
              "OpenBLAS");
  for (const Row& r : rows) {
    const Shape& s = *r.shape;
    std::printf("%-58s %c%c %5ld %4ld %5ld %8.1f %8.1f\n", s.where, s.trans_a ? 'T' : 'N',
                s.trans_b ? 'T' : 'N', long(s.m), long(s.n), long(s.k), r.ours, r.openblas);
  }
  return 0;
}
