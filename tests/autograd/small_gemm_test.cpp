// The small-product kernel against a plain triple loop (every transpose, sizes that leave
// partial register blocks in both directions, strided operands, alpha and beta), and the
// thread-split GEMM against one single GEMM.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/generator.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/small_gemm.h"
#include "tests/autograd/random_values.h"

namespace attn {

namespace {

// C = alpha op(A) op(B) + beta C in double, the textbook way, and for each entry how far a
// float computation of it may honestly land: a sum of k products plus beta c, in any order and
// with or without FMA, is off by at most about (k + 2) float eps times the sum of the terms'
// magnitudes (Higham's gamma_k bound). The bound grows with the length and size of the dot
// product, so it holds for every BLAS kernel and thread split, and still catches a wrong term.
void reference_gemm(bool ta,
                    bool tb,
                    int64_t m,
                    int64_t n,
                    int64_t k,
                    double alpha,
                    const std::vector<real>& a,
                    int64_t lda,
                    const std::vector<real>& b,
                    int64_t ldb,
                    double beta,
                    std::vector<double>& c,
                    std::vector<double>& bound,
                    int64_t ldc) {
  const double eps = std::numeric_limits<float>::epsilon();
  bound.assign(c.size(), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0, size = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double term = double(ta ? a[p * lda + i] : a[i * lda + p]) *
                            double(tb ? b[j * ldb + p] : b[p * ldb + j]);
        s += term, size += std::abs(term);
      }
      const double old_c = beta != 0 ? beta * c[i * ldc + j] : 0.0;
      c[i * ldc + j] = alpha * s + old_c;
      bound[i * ldc + j] = double(k + 2) * eps * (std::abs(alpha) * size + std::abs(old_c)) +
                           std::numeric_limits<float>::min();
    }
}

}  // namespace

TEST_SUITE("kernels") {
  TEST_CASE("small_gemm matches the triple loop for every transpose and ragged size") {
    Generator gen(7);
    const int64_t sizes[][3] = {{8, 1, 1},   {9, 33, 16},  {32, 33, 16}, {33, 16, 32},
                                {13, 64, 7}, {64, 17, 64}, {8, 8, 0},    {11, 40, 128}};
    for (const auto& s : sizes)
      for (int t = 0; t < 4; ++t)
        for (const double beta : {0.0, 1.0, -0.5}) {
          const int64_t m = s[0], n = s[1], k = s[2];
          const bool ta = t & 1, tb = t & 2;
          CAPTURE(m);
          CAPTURE(n);
          CAPTURE(k);
          CAPTURE(ta);
          CAPTURE(tb);
          CAPTURE(beta);
          REQUIRE(kernels::small_gemm_fits({.m = m, .n = n, .k = k}));
          // Leading dimensions wider than the matrices: the kernel must respect the strides.
          const int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 5;
          const std::vector<real> a = random_values(gen, (ta ? k : m) * lda),
                                  b = random_values(gen, (tb ? n : k) * ldb);
          std::vector<real> c = random_values(gen, m * ldc);
          if (beta == 0)  // beta 0 must not read C: NaN there would poison a read
            std::fill(c.begin(), c.end(), std::numeric_limits<real>::quiet_NaN());
          std::vector<double> want(c.begin(), c.end()), bound;
          reference_gemm(ta, tb, m, n, k, 0.75, a, lda, b, ldb, beta, want, bound, ldc);
          kernels::small_gemm({ta, tb, m, n, k, real(0.75), a.data(), lda, b.data(), ldb,
                               real(beta), c.data(), ldc});
          // The error on each entry, in units of that entry's rounding bound.
          double worst = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
              worst = std::max(worst,
                               std::abs(c[i * ldc + j] - want[i * ldc + j]) / bound[i * ldc + j]);
          CHECK(worst <= 1);
          // Padding columns between n and ldc are left alone.
          if (beta == 0) CHECK(std::isnan(c[n]));
        }
  }
  TEST_CASE("small_gemm's softmax-backward store equals the product followed by the row pass") {
    using Part = kernels::Triangle::Part;
    Generator gen(11);
    // (m, n, k): ragged register blocks in both directions, and W4's per-head score product.
    const int64_t sizes[][3] = {{37, 29, 41}, {128, 128, 32}, {9, 17, 16}};
    for (const auto& s : sizes)
      for (const bool lower : {false, true})
        for (const int64_t d : {0, 5, -3})
          for (const bool tb : {false, true}) {
            const int64_t m = s[0], n = s[1], k = s[2];
            // Full products only where small_gemm takes them outside a parallel region.
            if (!lower && (d != 0 || m * n * k > kernels::kSmallMaxSerialMNK)) continue;
            CAPTURE(m);
            CAPTURE(n);
            CAPTURE(lower);
            CAPTURE(d);
            CAPTURE(tb);
            const int64_t lda = k + 3, ldb = (tb ? k : n) + 2, ldc = n + 5, ldp = n + 1;
            const std::vector<real> a = random_values(gen, m * lda),
                                    b = random_values(gen, (tb ? n : k) * ldb),
                                    p = random_values(gen, m * ldp), dot = random_values(gen, m);
            const kernels::GemmCall g{.trans_b = tb,
                                      .m = m,
                                      .n = n,
                                      .k = k,
                                      .a = a.data(),
                                      .lda = lda,
                                      .b = b.data(),
                                      .ldb = ldb,
                                      .ldc = ldc,
                                      .triangle = {lower ? Part::kLowerC : Part::kAll, d}};
            REQUIRE(kernels::small_gemm_fits(g));
            std::vector<real> want(m * ldc), got(m * ldc);
            kernels::GemmCall plain = g;
            plain.c = want.data();
            kernels::small_gemm(plain);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j)
                want[i * ldc + j] = p[i * ldp + j] * (want[i * ldc + j] - dot[i]);
            kernels::GemmCall stored = g;
            stored.c = got.data();
            kernels::small_gemm(stored, {.p = p.data(), .ldp = ldp, .dot = dot.data()});
            // The same operations in the same order: the same bits, on every wanted entry.
            int64_t differ = 0;
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j)
                if (!lower || j <= i + d) differ += got[i * ldc + j] != want[i * ldc + j];
            CHECK(differ == 0);
          }
    const real x = 1;
    kernels::GemmCall scaled{.m = 8, .n = 8, .k = 1, .alpha = 2, .a = &x, .lda = 1};
    CHECK_THROWS_WITH(kernels::small_gemm(scaled, {}),
                      "small_gemm: the softmax-backward store needs alpha 1, beta 0");
  }
  TEST_CASE("gemm_split on 2 threads gives the single GEMM's result, split by rows or columns") {
    const int before = num_threads();
    set_num_threads(2);
    Generator gen(3);
    // (m, n, k): tall (split by rows), wide (split by columns), and uneven blocks.
    const int64_t sizes[][3] = {{300, 70, 90}, {40, 520, 128}, {97, 97, 200}};
    for (const auto& s : sizes)
      for (int t = 0; t < 4; ++t) {
        const int64_t m = s[0], n = s[1], k = s[2];
        const bool ta = t & 1, tb = t & 2;
        CAPTURE(m);
        CAPTURE(n);
        CAPTURE(ta);
        CAPTURE(tb);
        const std::vector<real> a = random_values(gen, m * k), b = random_values(gen, k * n);
        std::vector<real> c0 = random_values(gen, m * n), c1 = c0;
        const int64_t lda = ta ? m : k, ldb = tb ? k : n;
        std::vector<double> want(c0.begin(), c0.end()), bound;
        reference_gemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 0.5, want, bound, n);
        kernels::gemm(ta, tb, m, n, k, 1.5, a.data(), lda, b.data(), ldb, 0.5, c0.data(), n);
        kernels::gemm_split(
            {ta, tb, m, n, k, 1.5, a.data(), lda, b.data(), ldb, 0.5, c1.data(), n});
        // Each result is within its rounding bound of the exact product, so the two are within
        // twice that bound of each other (the split may block and order the sums differently).
        double worst = 0, worst_exact = 0;
        for (int64_t i = 0; i < m * n; ++i) {
          worst = std::max(worst, std::abs(double(c0[i]) - double(c1[i])) / (2 * bound[i]));
          worst_exact = std::max(worst_exact, std::abs(c1[i] - want[i]) / bound[i]);
        }
        CHECK(worst <= 1);
        CHECK(worst_exact <= 1);
      }
    set_num_threads(before);
  }
}

}  // namespace attn
