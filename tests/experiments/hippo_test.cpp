// HiPPO-LegS (common/hippo_study.h): the matrices, cases with a known answer (a constant is
// a fixed point; a polynomial of degree < N comes back almost exactly), the online update landing
// on the offline projection, and the reconstruction error falling with N.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autograd/error.h"
#include "experiments/common/hippo_study.h"

namespace attn::experiments {

namespace {

// f(s) at the sample midpoints s = k - 1/2 of a length-L signal, as a function of u = s / L.
template <class F>
std::vector<double> sampled(int64_t length, F f) {
  std::vector<double> v;
  for (int64_t k = 1; k <= length; ++k)
    v.push_back(f((static_cast<double>(k) - 0.5) / static_cast<double>(length)));
  return v;
}

double cubic(double u) {
  return 0.7 - 1.3 * u + 2.0 * u * u * u;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("HiPPO-LegS: the matrices, and A e_0 = -B (why a constant is a fixed point)") {
    const LegsMatrices m = legs_matrices(4);
    CHECK(m.a[0] == -1.0);
    CHECK(m.a[1 * 4 + 1] == -2.0);
    CHECK(m.a[3 * 4 + 3] == -4.0);
    CHECK(m.a[2 * 4 + 1] == doctest::Approx(-std::sqrt(5.0) * std::sqrt(3.0)));
    CHECK(m.a[1 * 4 + 2] == 0.0);  // nothing above the diagonal
    CHECK(m.b[3] == doctest::Approx(std::sqrt(7.0)));
    for (int64_t i = 0; i < 4; ++i)
      CHECK(m.a[static_cast<size_t>(i * 4)] == doctest::Approx(-m.b[static_cast<size_t>(i)]));
    CHECK_THROWS_AS(legs_matrices(0), Error);
  }

  TEST_CASE("Legendre polynomials by the recurrence") {
    const std::vector<double> p = legendre_values(0.5, 4);
    CHECK(p[0] == 1.0);
    CHECK(p[1] == 0.5);
    CHECK(p[2] == doctest::Approx(-0.125));   // (3 x^2 - 1) / 2
    CHECK(p[3] == doctest::Approx(-0.4375));  // (5 x^3 - 3 x) / 2
  }

  TEST_CASE("HiPPO-LegS: a constant signal keeps coefficients (f, 0, ..., 0) exactly") {
    const std::vector<double> f(300, 1.75);
    const std::vector<double> c = legs_online(f, 8);
    CHECK(c[0] == doctest::Approx(1.75).epsilon(1e-12));
    for (size_t i = 1; i < c.size(); ++i) CHECK(std::abs(c[i]) < 1e-12);
    CHECK(rmse(legs_reconstruct(c, 300), f) < 1e-12);
  }

  TEST_CASE("HiPPO-LegS: a cubic (degree < N) reconstructs almost exactly from the online memory") {
    // The exact dynamics keep a polynomial of degree < N in the span, so all that remains is the
    // discretisation error, second order in the step (1/L of the history): halving it twice
    // (L = 250 -> 1000) must shrink the error by well over 4 (16 for a clean second order).
    const std::vector<double> f250 = sampled(250, cubic), f1000 = sampled(1000, cubic);
    const double e250 = rmse(legs_reconstruct(legs_online(f250, 8), 250), f250);
    const double e1000 = rmse(legs_reconstruct(legs_online(f1000, 8), 1000), f1000);
    CHECK(e1000 < 1e-5);
    CHECK(e250 > 4 * e1000);
    // The online coefficients are the offline best fit's, up to that same error.
    const std::vector<double> on = legs_online(f1000, 8), off = legs_best_fit(f1000, 8);
    CHECK(rmse(on, off) < 1e-4);
    // The cubic has no component beyond degree 3.
    for (size_t i = 4; i < on.size(); ++i) CHECK(std::abs(on[i]) < 1e-4);
  }

  TEST_CASE("HiPPO-LegS: the error of a smooth non-polynomial signal falls as N grows") {
    const std::vector<double> f = sampled(800, [](double u) { return std::sin(9.0 * u) + u; });
    double previous = 1e9;
    for (int64_t n : {2, 4, 8, 16}) {
      const double e = rmse(legs_reconstruct(legs_online(f, n), 800), f);
      CHECK(e < previous);
      previous = e;
    }
    CHECK(previous < 1e-3);
    CHECK_THROWS_AS(legs_online({}, 4), Error);
    CHECK_THROWS_AS(rmse({1.0}, {1.0, 2.0}), Error);
  }
}

}  // namespace attn::experiments
