// least_squares (experiments/common/least_squares.h): recovers an exact solution, matches the
// normal equations on an overdetermined system, and refuses bad sizes.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "experiments/common/least_squares.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("least squares: exact systems are solved; residuals are orthogonal to A") {
    Generator gen(3);
    const int64_t n = 9, m = 4, k = 2;
    const Tensor ta = Tensor::randn({n, m}, gen), tx = Tensor::randn({m, k}, gen);
    const Tensor noise = Tensor::randn({n, k}, gen);
    std::vector<double> a(n * m), x(m * k), b(n * k), noisy(n * k);
    for (int64_t i = 0; i < n * m; ++i) a[i] = ta[i];
    for (int64_t i = 0; i < m * k; ++i) x[i] = tx[i];
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        double s = 0;
        for (int64_t j = 0; j < m; ++j) s += a[r * m + j] * x[j * k + c];
        b[r * k + c] = s;
        noisy[r * k + c] = s + noise[r * k + c];
      }
    const LeastSquares exact = least_squares(a, b, n, m, k);
    for (int64_t i = 0; i < m * k; ++i) CHECK(exact.x[i] == doctest::Approx(x[i]).epsilon(1e-12));
    CHECK(exact.r_diagonal_ratio >= 1);
    // Overdetermined with noise: the optimum leaves a residual orthogonal to every column of A.
    const LeastSquares fit = least_squares(a, noisy, n, m, k);
    for (int64_t j = 0; j < m; ++j)
      for (int64_t c = 0; c < k; ++c) {
        double dot = 0;
        for (int64_t r = 0; r < n; ++r) {
          double pred = 0;
          for (int64_t l = 0; l < m; ++l) pred += a[r * m + l] * fit.x[l * k + c];
          dot += a[r * m + j] * (noisy[r * k + c] - pred);
        }
        CHECK(std::abs(dot) < 1e-12);
      }
    CHECK_THROWS_AS(least_squares(a, b, m - 1, m, k), Error);  // fewer rows than unknowns
    CHECK_THROWS_AS(least_squares(std::vector<double>(n * m, 0.0), b, n, m, k), Error);
  }
}

}  // namespace attn::experiments
