// attention-rank's singular values (experiments/efficient/attention_rank.h): known spectra,
// the Frobenius identity, the numerical rank of a sum of rank-one terms in float32, the energy
// share, and convergence on a causal averaging matrix (clustered singular values).
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "experiments/efficient/attention_rank.h"

namespace attn::experiments {

namespace {

double frobenius2(const Tensor& a) {
  double f = 0;
  for (int64_t i = 0; i < a.numel(); ++i) f += static_cast<double>(a[i]) * a[i];
  return f;
}

double sum_of_squares(const std::vector<double>& s) {
  double f = 0;
  for (double v : s) f += v * v;
  return f;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("attention-rank svd: a scaled permutation's singular values are its entries") {
    const Tensor a = Tensor::from_vector({3, 3}, {0, 2, 0, 1, 0, 0, 0, 0, 5});
    const std::vector<double> s = rank::singular_values(a);
    REQUIRE(s.size() == 3);
    CHECK(s[0] == doctest::Approx(5).epsilon(1e-12));
    CHECK(s[1] == doctest::Approx(2).epsilon(1e-12));
    CHECK(s[2] == doctest::Approx(1).epsilon(1e-12));
  }

  TEST_CASE("attention-rank svd: sum s^2 is |A|_F^2, and A and its transpose agree") {
    Generator gen(5);
    const Tensor tall = Tensor::randn({7, 4}, gen);
    Tensor wide({4, 7});
    for (int64_t i = 0; i < 7; ++i)
      for (int64_t j = 0; j < 4; ++j) wide[j * 7 + i] = tall[i * 4 + j];
    const std::vector<double> s = rank::singular_values(tall), st = rank::singular_values(wide);
    REQUIRE(s.size() == 4);
    REQUIRE(st.size() == 4);
    CHECK(sum_of_squares(s) == doctest::Approx(frobenius2(tall)).epsilon(1e-12));
    for (size_t i = 0; i < s.size(); ++i) CHECK(s[i] == doctest::Approx(st[i]).epsilon(1e-12));
    for (size_t i = 1; i < s.size(); ++i) CHECK(s[i] <= s[i - 1]);
  }

  TEST_CASE("attention-rank svd: a float32 sum of three rank-one terms has numerical rank 3") {
    Generator gen(11);
    const int64_t n = 24;
    const Tensor u = Tensor::randn({n, 3}, gen), v = Tensor::randn({n, 3}, gen);
    Tensor a = Tensor::zeros({n, n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t r = 0; r < 3; ++r) a[i * n + j] += u[i * 3 + r] * v[j * 3 + r];
    const std::vector<double> s = rank::singular_values(a);
    CHECK(rank::numerical_rank(s, n) == 3);
    CHECK(s[3] > 0);  // the float32 rounding is there, below the threshold
    CHECK(s[3] < s[0] * rank::rank_threshold(n));
  }

  TEST_CASE("attention-rank svd: top-k energy and a causal averaging matrix") {
    CHECK(rank::top_energy({4, 3}, 1) == doctest::Approx(16.0 / 25.0));
    CHECK(rank::top_energy({4, 3}, 5) == doctest::Approx(1.0));
    const int64_t n = 64;  // row i averages the first i + 1 columns: full rank, clustered values
    Tensor a = Tensor::zeros({n, n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) a[i * n + j] = 1.0f / static_cast<float>(i + 1);
    const std::vector<double> s = rank::singular_values(a);
    CHECK(sum_of_squares(s) == doctest::Approx(frobenius2(a)).epsilon(1e-10));
    CHECK(rank::numerical_rank(s, n) == n);
    CHECK_THROWS_AS(rank::singular_values(Tensor::zeros({2, 2, 2})), Error);
  }
}

}  // namespace attn::experiments
