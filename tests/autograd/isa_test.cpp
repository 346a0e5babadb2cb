// Every instruction set's kernels (kernels/isa.h) this CPU runs, against double-precision
// references with bounds scaled by the computation, and against the portable copy where the
// result is exact (Philox); and ATTN_ISA's parsing. The other kernel suites test the chosen copy
// only: scripts/test runs them under each ATTN_ISA.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/error.h"
#include "autograd/generator.h"
#include "autograd/kernels/isa.h"
#include "tests/autograd/random_values.h"

namespace attn {

namespace {

using kernels::Isa;
using kernels::KernelTable;

constexpr double kEps = std::numeric_limits<real>::epsilon() / 2;  // the unit roundoff

// C (rows, n) = A (rows, k) B^T + bias, then ReLU, by the table's panel_gemm (or its shared
// form); returns the worst |C - exact| / (k + 3) eps sum |terms|, so <= 1 passes.
double panel_gemm_error(const KernelTable& t, int64_t rows, int64_t k, int64_t n, bool shared) {
  Generator gen(rows * 7 + k);
  const std::vector<real> a = random_values(gen, rows * k), b = random_values(gen, n * k),
                          bias = random_values(gen, n);
  std::vector<real> c(rows * n), sums(k);
  const kernels::PanelGemm g{.rows = rows,
                             .k = k,
                             .n = n,
                             .a = a.data(),
                             .lda = k,
                             .b = b.data(),
                             .ldb = k,
                             .b_transposed = true,
                             .row_init = bias.data(),
                             .relu = true,
                             .c = c.data(),
                             .ldc = n,
                             .col_sums = sums.data()};
  if (shared) {
    kernels::SharedPanelGemm::State s;
    s.g = g;
    t.shared_panel_gemm_start(s);
    t.shared_panel_gemm_run(s);
    t.shared_panel_gemm_finish(s);
  } else {
    t.panel_gemm(g);
  }
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double exact = bias[j], magnitude = std::abs(exact);
      for (int64_t p = 0; p < k; ++p) {
        const double term = double(a[i * k + p]) * double(b[j * k + p]);
        exact += term, magnitude += std::abs(term);
      }
      const double bound = double(k + 3) * kEps * magnitude + std::numeric_limits<real>::min();
      worst = std::max(worst, std::abs(c[i * n + j] - std::max(exact, 0.0)) / bound);
    }
  for (int64_t p = 0; p < k; ++p) {
    double exact = 0, magnitude = 0;
    for (int64_t i = 0; i < rows; ++i) exact += a[i * k + p], magnitude += std::abs(a[i * k + p]);
    const double bound = double(rows + 1) * kEps * magnitude + std::numeric_limits<real>::min();
    worst = std::max(worst, std::abs(sums[p] - exact) / bound);
  }
  return worst;
}

// C (m, n) = A (m, k) B^T by the table's small_gemm: the same measure as panel_gemm_error.
double small_gemm_error(const KernelTable& t, int64_t m, int64_t n, int64_t k) {
  Generator gen(m * 5 + n);
  const std::vector<real> a = random_values(gen, m * k), b = random_values(gen, n * k);
  std::vector<real> c(m * n, std::numeric_limits<real>::quiet_NaN());
  const kernels::GemmCall g{.trans_b = true,
                            .m = m,
                            .n = n,
                            .k = k,
                            .a = a.data(),
                            .lda = k,
                            .b = b.data(),
                            .ldb = k,
                            .c = c.data(),
                            .ldc = n};
  REQUIRE(t.small_gemm_fits(g));
  t.small_gemm(g);
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double term = double(a[i * k + p]) * double(b[j * k + p]);
        exact += term, magnitude += std::abs(term);
      }
      const double bound = double(k + 2) * kEps * magnitude + std::numeric_limits<real>::min();
      worst = std::max(worst, std::abs(c[i * n + j] - exact) / bound);
    }
  return worst;
}

// softmax_row over rows of c values in [-4, 4): y_j = e_j / S. exp(x_j - max) is within 2 ulp of
// exp of the rounded difference, which is within |x_j - max| eps of the exact one; S adds c
// positive terms (c eps); the division one more eps. Returns the worst error over that bound.
double softmax_error(const KernelTable& t, int64_t c) {
  Generator gen(c);
  std::vector<real> x(c), y(c);
  for (auto& v : x) v = real(8 * gen.uniform() - 4);
  t.softmax_row(x.data(), y.data(), c);
  double max = -INFINITY, total = 0;
  for (real v : x) max = std::max(max, double(v));
  for (real v : x) total += std::exp(double(v) - max);
  double worst = 0;
  for (int64_t j = 0; j < c; ++j) {
    const double exact = std::exp(double(x[j]) - max) / total;
    const double bound = (std::abs(double(x[j]) - max) + 5 + double(c)) * kEps * exact;
    worst = std::max(worst, std::abs(y[j] - exact) / bound);
  }
  return worst;
}

// The GEMMs and softmax of one table against exact arithmetic.
void check_against_exact(const KernelTable& t) {
  // Ragged rows and columns (partial register blocks and panels), k over one pass.
  for (const auto& s : {std::array<int64_t, 3>{100, 300, 45}, {37, 64, 32}, {24, 520, 70}})
    for (bool shared : {false, true}) {
      CAPTURE(s[0]);
      CAPTURE(s[1]);
      CAPTURE(s[2]);
      CHECK(panel_gemm_error(t, s[0], s[1], s[2], shared) <= 1);
    }
  for (const auto& s : {std::array<int64_t, 3>{32, 33, 16}, {13, 64, 32}, {9, 7, 100}}) {
    CAPTURE(s[0]);
    CHECK(small_gemm_error(t, s[0], s[1], s[2]) <= 1);
  }
  for (int64_t c : {1, 7, 8, 9, 16, 17, 33, 128, 129, 300}) {
    CAPTURE(c);
    CHECK(softmax_error(t, c) <= 1);
  }
}

}  // namespace

TEST_SUITE("kernels") {
  TEST_CASE("ATTN_ISA names: the three instruction sets, nothing else") {
    CHECK(kernels::parse_isa("generic") == Isa::generic);
    CHECK(kernels::parse_isa("avx2") == Isa::avx2);
    CHECK(kernels::parse_isa("avx512") == Isa::avx512);
    for (const char* bad : {"", "AVX2", "avx", "avx512f", "avx2 ", "sse2", "native"}) {
      CAPTURE(bad);
      CHECK(!kernels::parse_isa(bad));
    }
    for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
      CHECK(kernels::parse_isa(kernels::isa_name(isa)) == isa);
  }

  TEST_CASE("the instruction set in use is one this CPU runs; generic runs everywhere") {
    const std::vector<Isa> runnable = kernels::runnable_isas();
    REQUIRE(!runnable.empty());
    CHECK(runnable.front() == Isa::generic);
    CHECK(std::find(runnable.begin(), runnable.end(), kernels::active_isa()) != runnable.end());
    for (Isa isa : runnable) CHECK(kernels::kernels_for(isa).isa == isa);
    for (Isa isa : {Isa::avx2, Isa::avx512})
      if (std::find(runnable.begin(), runnable.end(), isa) == runnable.end())
        CHECK_THROWS_AS(kernels::kernels_for(isa), Error);
  }

  TEST_CASE("every instruction set's kernels agree with exact arithmetic") {
    for (Isa isa : kernels::runnable_isas()) {
      CAPTURE(kernels::isa_name(isa));
      check_against_exact(kernels::kernels_for(isa));
    }
  }

  TEST_CASE("every instruction set's row statistics and GELU agree with the portable ones") {
    const KernelTable& base = kernels::kernels_for(Isa::generic);
    Generator gen(3);
    const int64_t n = 1000;
    const std::vector<real> x = random_values(gen, n), dy = random_values(gen, n);
    std::vector<real> y0(n), y1(n), s0(n), s1(n);
    for (Isa isa : kernels::runnable_isas()) {
      const KernelTable& t = kernels::kernels_for(isa);
      CAPTURE(kernels::isa_name(isa));
      // Sums of c values: each within c eps sum |terms| of exact, so within twice that apart.
      for (int64_t c : {32, 96, 100}) {
        double magnitude = 0, square = 0;
        for (int64_t j = 0; j < c; ++j) magnitude += std::abs(x[j]), square += double(x[j]) * x[j];
        const kernels::RowMoments a = t.row_moments(x.data(), c), b = base.row_moments(x.data(), c);
        CHECK(std::abs(a.mean - b.mean) <= 2 * c * kEps * magnitude / c);
        CHECK(std::abs(a.var - b.var) <= 4 * c * kEps * square / c);
      }
      // GELU: each copy within a few ulp of x Phi(x) (vec_math_test bounds the portable one).
      for (bool tanh_form : {false, true}) {
        base.gelu_with_slope_n(x.data(), y0.data(), s0.data(), n, tanh_form);
        t.gelu_with_slope_n(x.data(), y1.data(), s1.data(), n, tanh_form);
        for (int64_t j = 0; j < n; ++j) {
          CHECK(std::abs(y1[j] - y0[j]) <= 16 * kEps * (std::abs(y0[j]) + std::abs(x[j])));
          CHECK(std::abs(s1[j] - s0[j]) <= 16 * kEps * (std::abs(s0[j]) + 1));
        }
      }
      // Philox: integer arithmetic, so word for word, including ragged ends.
      for (int64_t count : {1, 63, 64, 1000}) {
        std::vector<uint32_t> w0(count), w1(count);
        base.philox_words(42, 8, count, w0.data());
        t.philox_words(42, 8, count, w1.data());
        CHECK(w0 == w1);
      }
    }
  }
}

}  // namespace attn
