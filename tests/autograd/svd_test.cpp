// autograd/linalg/svd.h: u diag(s) v^T rebuilds the matrix (tall, wide, square, rank-deficient),
// u and v have orthonormal columns, s is descending and equals singular_values, and a
// non-matrix is refused. (The spectra themselves are checked in attention_rank_svd_test.cpp.)
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/generator.h"
#include "autograd/linalg/svd.h"
#include "autograd/tensor.h"

namespace attn::linalg {

namespace {

// max |(u diag(s) v^T)[i,j] - a[i,j]| in double.
double rebuild_error(const Tensor& a, const Svd& d) {
  const int64_t rows = a.size(0), cols = a.size(1), k = d.s.size(0);
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double x = 0;
      for (int64_t l = 0; l < k; ++l)
        x += static_cast<double>(d.u[i * k + l]) * d.s[l] * d.v[j * k + l];
      worst = std::max(worst, std::abs(x - a[i * cols + j]));
    }
  return worst;
}

// max |m^T m - I| over the (k,k) Gram matrix of m's columns, skipping zero columns.
double orthonormality_error(const Tensor& m) {
  const int64_t n = m.size(0), k = m.size(1);
  double worst = 0;
  for (int64_t p = 0; p < k; ++p)
    for (int64_t q = 0; q < k; ++q) {
      double g = 0;
      for (int64_t i = 0; i < n; ++i) g += static_cast<double>(m[i * k + p]) * m[i * k + q];
      worst = std::max(worst, std::abs(g - (p == q ? 1.0 : 0.0)));
    }
  return worst;
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("svd rebuilds tall, wide and square matrices from orthonormal factors") {
    Generator gen(7);
    for (const auto& [rows, cols] : {std::pair{9, 5}, std::pair{5, 9}, std::pair{6, 6}}) {
      const Tensor a = Tensor::randn({rows, cols}, gen);
      const Svd d = svd(a);
      const int64_t k = std::min(rows, cols);
      CHECK(d.u.shape() == Shape{rows, k});
      CHECK(d.v.shape() == Shape{cols, k});
      CHECK(d.s.shape() == Shape{k});
      // float32 factors of an O(1) matrix: each entry carries ~k float roundings of 6e-8.
      CHECK(rebuild_error(a, d) < 1e-5);
      CHECK(orthonormality_error(d.u) < 1e-5);
      CHECK(orthonormality_error(d.v) < 1e-5);
      const std::vector<double> s = singular_values(a);
      for (int64_t l = 0; l < k; ++l) {
        CHECK(std::abs(d.s[l] - s[static_cast<size_t>(l)]) < 1e-5 * s[0]);
        if (l > 0) CHECK(d.s[l] <= d.s[l - 1]);
      }
    }
  }

  TEST_CASE("svd of a rank-deficient matrix: zero singular values, the product still exact") {
    Tensor a = Tensor::zeros({4, 3});
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j)
        a[i * 3 + j] = static_cast<real>((i + 1) * (j + 2));  // rank 1
    const Svd d = svd(a);
    CHECK(d.s[1] < 1e-5 * d.s[0]);
    CHECK(rebuild_error(a, d) < 1e-4);
    CHECK_THROWS_AS(svd(Tensor::zeros({2, 2, 2})), Error);
  }
}

}  // namespace attn::linalg
