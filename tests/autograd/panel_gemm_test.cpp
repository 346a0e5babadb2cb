// The linear layers' own GEMM (kernels/panel_gemm.h) against a plain triple loop in double:
// both layouts of the weight, a bias row, accumulation, ReLU, an element-wise scale, A's column
// sums, sizes that leave partial register blocks and panels, k longer than one pass, and 1
// against 2 threads.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/generator.h"
#include "autograd/kernels/isa.h"
#include "autograd/kernels/panel_gemm.h"
#include "autograd/kernels/parallel.h"
#include "tests/autograd/random_values.h"

namespace attn {

namespace {

struct Case {
  int64_t rows, k, n;
  bool transposed, bias, accumulate, relu, scaled;
};

// Runs one case with leading dimensions wider than the matrices and returns the worst error
// against the triple loop, as a fraction of the standard bound for a sum of k + 2 rounded terms,
// (k + 2) eps sum |term| (any wrong term or index gives O(1) errors, thousands of times over it);
// also checks that the padding columns are untouched.
double worst_error(Generator& gen, const Case& t) {
  const int64_t lda = t.k + 3, ldb = (t.transposed ? t.k : t.n) + 2, ldc = t.n + 5;
  const std::vector<real> a = random_values(gen, t.rows * lda),
                          b = random_values(gen, (t.transposed ? t.n : t.k) * ldb),
                          bias = random_values(gen, t.n),
                          scale = random_values(gen, t.rows * (t.n + 1));
  std::vector<real> c = random_values(gen, t.rows * ldc);
  std::vector<real> sums(t.k, std::numeric_limits<real>::quiet_NaN());  // written, never read
  if (!t.accumulate)  // C is only written: NaN there would poison any read
    std::fill(c.begin(), c.end(), std::numeric_limits<real>::quiet_NaN());
  std::vector<double> want(t.rows * t.n), bound(t.rows * t.n);
  const double eps = std::numeric_limits<real>::epsilon() / 2;
  for (int64_t i = 0; i < t.rows; ++i)
    for (int64_t j = 0; j < t.n; ++j) {
      double s = t.accumulate ? double(c[i * ldc + j]) : 0.0;
      if (t.bias) s += bias[j];
      double magnitude = std::abs(s);
      for (int64_t p = 0; p < t.k; ++p) {
        const double term =
            double(a[i * lda + p]) * double(t.transposed ? b[j * ldb + p] : b[p * ldb + j]);
        s += term, magnitude += std::abs(term);
      }
      const double factor = t.scaled ? double(scale[i * (t.n + 1) + j]) : 1.0;
      want[i * t.n + j] = t.relu ? std::max(s, 0.0) : s * factor;
      bound[i * t.n + j] =
          double(t.k + 3) * eps * magnitude * std::abs(factor) + std::numeric_limits<real>::min();
    }
  kernels::panel_gemm({.rows = t.rows,
                       .k = t.k,
                       .n = t.n,
                       .a = a.data(),
                       .lda = lda,
                       .b = b.data(),
                       .ldb = ldb,
                       .b_transposed = t.transposed,
                       .row_init = t.bias ? bias.data() : nullptr,
                       .accumulate = t.accumulate,
                       .relu = t.relu,
                       .scale = t.scaled ? scale.data() : nullptr,
                       .ld_scale = t.n + 1,
                       .c = c.data(),
                       .ldc = ldc,
                       .col_sums = sums.data()});
  double worst = 0;
  // A's column sums, against the same bound for a sum of rows + 1 terms.
  for (int64_t p = 0; p < t.k; ++p) {
    double s = 0, magnitude = 0;
    for (int64_t i = 0; i < t.rows; ++i) s += a[i * lda + p], magnitude += std::abs(a[i * lda + p]);
    const double sum_bound =
        double(t.rows + 1) * eps * magnitude + std::numeric_limits<real>::min();
    worst = std::max(worst, std::abs(sums[p] - s) / sum_bound);
  }
  for (int64_t i = 0; i < t.rows; ++i) {
    for (int64_t j = 0; j < t.n; ++j)
      worst = std::max(
          worst, std::abs(c[i * ldc + j] - want[i * t.n + j]) / (1 + std::abs(want[i * t.n + j])));
    if (!t.accumulate) CHECK(std::isnan(c[i * ldc + t.n]));
  }
  return worst;
}

}  // namespace

TEST_SUITE("kernels") {
  TEST_CASE("panel_gemm matches the triple loop for every option and ragged size") {
    Generator gen(11);
    // (rows, k, n): whole blocks, ragged rows (not a multiple of 6) and columns (not of 16),
    // k over one pass (256), fewer rows than the kernel takes (BLAS then), k of 0.
    const int64_t sizes[][3] = {{96, 128, 64}, {100, 37, 50},  {17, 300, 33}, {7, 16, 16},
                                {64, 520, 17}, {203, 64, 130}, {30, 0, 20}};
    for (const auto& s : sizes)
      for (int flags = 0; flags < 32; ++flags) {
        const Case t{s[0],
                     s[1],
                     s[2],
                     bool(flags & 1),
                     bool(flags & 2),
                     bool(flags & 4),
                     bool(flags & 8),
                     bool(flags & 16)};
        // A scale (gelu_linear's input gradient) comes without the other extras.
        if (t.scaled && (t.bias || t.accumulate || t.relu)) continue;
        CAPTURE(t.rows);
        CAPTURE(t.k);
        CAPTURE(t.n);
        CAPTURE(flags);
        CHECK(worst_error(gen, t) <= 1);
      }
  }
  // A promise of the register kernel (whole row blocks per thread); the portable kernels
  // (ATTN_ISA=generic, or off x86) take the BLAS fallback, whose split across threads makes no
  // such promise: the case says so and stops there.
  TEST_CASE("panel_gemm gives the same bits on 1 and 2 threads") {
    if (kernels::active_isa() == kernels::Isa::generic) {
      MESSAGE("not judged: the portable kernels take the BLAS fallback");
      return;
    }
    const int before = num_threads();
    Generator gen(5);
    const int64_t rows = 1003, k = 300, n = 70;
    const std::vector<real> a = random_values(gen, rows * k), b = random_values(gen, n * k),
                            bias = random_values(gen, n);
    std::vector<real> c1(rows * n), c2(rows * n), sums1(k), sums2(k);
    for (auto* c : {&c1, &c2}) {
      set_num_threads(c == &c1 ? 1 : 2);
      kernels::panel_gemm({.rows = rows,
                           .k = k,
                           .n = n,
                           .a = a.data(),
                           .lda = k,
                           .b = b.data(),
                           .ldb = k,
                           .b_transposed = true,
                           .row_init = bias.data(),
                           .c = c->data(),
                           .ldc = n,
                           .col_sums = (c == &c1 ? sums1 : sums2).data()});
    }
    set_num_threads(before);
    CHECK(c1 == c2);
    CHECK(sums1 == sums2);
  }
}

}  // namespace attn
