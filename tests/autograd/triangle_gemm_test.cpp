// Products with a triangle (kernels/blas.h): against a masked triple loop, through every route
// gemm() takes (small_gemm's 4-row skipping; row blocks of BLAS rectangles plus small edges; edges
// too wide to pack, copied with their unread part zeroed), every transpose, beta 0 and not.
// What op(A) holds outside its triangle is NaN: reading it even once would show.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/generator.h"
#include "autograd/kernels/blas.h"

namespace attn {

namespace {

using Part = kernels::Triangle::Part;

bool a_read(Part part, int64_t i, int64_t p, int64_t d) {
  if (part == Part::kLowerA) return p <= i + d;
  if (part == Part::kUpperA) return p >= i + d;
  return true;
}

}  // namespace

TEST_SUITE("kernels") {
  TEST_CASE("gemm with a triangle skips exactly the part it should, on every route") {
    Generator gen(13);
    // (m, n, k): packs (small_gemm); BLAS blocks with small edges; edges too wide to pack.
    const int64_t sizes[][3] = {{37, 29, 41}, {150, 40, 300}, {150, 300, 90}};
    const int64_t diagonals[] = {0, 5, -3, 200};
    for (const Part part : {Part::kLowerA, Part::kUpperA, Part::kLowerC})
      for (const auto& s : sizes)
        for (const int64_t d : diagonals)
          for (int t = 0; t < 4; ++t)
            for (const double beta : {0.0, 0.5}) {
              const int64_t m = s[0], n = s[1], k = s[2];
              const bool ta = t & 1, tb = t & 2;
              CAPTURE(static_cast<int>(part));
              CAPTURE(m);
              CAPTURE(n);
              CAPTURE(d);
              CAPTURE(ta);
              CAPTURE(tb);
              CAPTURE(beta);
              const int64_t lda = ta ? m : k, ldb = tb ? k : n;
              std::vector<real> a(m * k), b(k * n), c(m * n);
              for (auto& x : b) x = real(gen.normal());
              for (auto& x : c) x = real(gen.normal());
              for (int64_t i = 0; i < m; ++i)
                for (int64_t p = 0; p < k; ++p)
                  (ta ? a[p * lda + i] : a[i * lda + p]) =
                      a_read(part, i, p, d) ? real(gen.normal())
                                            : std::numeric_limits<real>::quiet_NaN();
              // want, and the float rounding bound k * eps * sum |terms| for each entry.
              std::vector<double> want(m * n), bound(m * n);
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  double sum = 0, size = 0;
                  for (int64_t p = 0; p < k; ++p)
                    if (a_read(part, i, p, d)) {
                      const double term = double(ta ? a[p * lda + i] : a[i * lda + p]) *
                                          double(tb ? b[j * ldb + p] : b[p * ldb + j]);
                      sum += term;
                      size += std::abs(term);
                    }
                  want[i * n + j] = 0.75 * sum + beta * c[i * n + j];
                  bound[i * n + j] = (k + 2) * std::numeric_limits<float>::epsilon() *
                                     (0.75 * size + std::abs(beta * c[i * n + j]));
                }
              kernels::gemm({.trans_a = ta,
                             .trans_b = tb,
                             .m = m,
                             .n = n,
                             .k = k,
                             .alpha = real(0.75),
                             .a = a.data(),
                             .lda = lda,
                             .b = b.data(),
                             .ldb = ldb,
                             .beta = real(beta),
                             .c = c.data(),
                             .ldc = n,
                             .triangle = {part, d}});
              int64_t wrong = 0;
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  if (part == Part::kLowerC && j > i + d) continue;  // not wanted
                  const double got = c[i * n + j];
                  if (!(std::abs(got - want[i * n + j]) <= bound[i * n + j])) ++wrong;  // NaN too
                }
              CHECK(wrong == 0);
            }
  }
}

}  // namespace attn
