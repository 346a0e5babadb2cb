// power_law_fit and compute_frontier (experiments/common/): the scaling-law fit recovers a known
// law, agrees with the straight line in log(y - c) at its own floor, keeps the floor at 0 when
// the data have none, and brackets alpha with its bootstrap; the IsoFLOP reading finds the
// optimum of curves built with a known one.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/generator.h"
#include "experiments/common/compute_frontier.h"
#include "experiments/common/loglog.h"
#include "experiments/common/power_law_fit.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("power-law fit: exact data give back a, alpha and c") {
    const std::vector<double> n{1e3, 3e3, 1e4, 3e4, 1e5, 3e5};
    for (const double alpha : {0.08, 0.35, 1.2}) {
      std::vector<double> y;
      for (double x : n) y.push_back(40.0 * std::pow(x, -alpha) + 0.9);
      const PowerLawFit f = fit_power_law(n, y);
      CHECK(f.alpha == doctest::Approx(alpha).epsilon(1e-6));
      CHECK(f.c == doctest::Approx(0.9).epsilon(1e-6));
      CHECK(f.a == doctest::Approx(40.0).epsilon(1e-5));
      CHECK(f.rms < 1e-8);
      CHECK(f.at(5e4) == doctest::Approx(40.0 * std::pow(5e4, -alpha) + 0.9).epsilon(1e-8));
    }
  }

  TEST_CASE("power-law fit: at the fitted floor, log(y - c) against log x has slope -alpha") {
    // Noisy data: the fitted (alpha, c) need not be the truth, but with c fixed at the fitted
    // value the best straight line in log space should have nearly the same slope.
    Generator gen(5);
    std::vector<double> n, y;
    for (int i = 0; i < 8; ++i) {
      n.push_back(500 * std::pow(3.0, i));
      y.push_back(6.0 * std::pow(n.back(), -0.3) + 1.1 + 0.002 * gen.normal());
    }
    const PowerLawFit f = fit_power_law(n, y);
    std::vector<double> reducible;
    for (double v : y) reducible.push_back(v - f.c);
    CHECK(-log_log_slope(n, reducible) == doctest::Approx(f.alpha).epsilon(0.05));
    CHECK(f.alpha == doctest::Approx(0.3).epsilon(0.2));
    CHECK(f.c == doctest::Approx(1.1).epsilon(0.05));
  }

  TEST_CASE("power-law fit: data without a floor get c = 0; bad input is refused") {
    const std::vector<double> n{10, 100, 1000, 10000};
    std::vector<double> y;
    for (double x : n) y.push_back(3.0 * std::pow(x, -0.5));
    const PowerLawFit f = fit_power_law(n, y);
    CHECK(f.c == doctest::Approx(0).epsilon(1e-9));  // no negative floor either way
    CHECK(f.alpha == doctest::Approx(0.5).epsilon(1e-4));
    CHECK_THROWS_AS(fit_power_law({1, 2}, {1, 2}), Error);
    CHECK_THROWS_AS(fit_power_law({1, 2, 0}, {1, 2, 3}), Error);
    CHECK_THROWS_AS(fit_power_law({1, 2, 3}, {1, 2}), Error);
  }

  TEST_CASE("power-law bootstrap: the interval brackets the true alpha and shrinks with noise") {
    const std::vector<double> n{1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6};
    auto law = [](double x) { return 20.0 * std::pow(x, -0.4) + 1.0; };
    auto width = [&](double noise) {
      Generator gen(11);
      const BootstrapFit b = bootstrap_power_law(
          n,
          [&](Generator* g) {
            std::vector<double> y;
            for (double x : n) y.push_back(law(x) * (1 + (g ? noise * g->normal() : 0)));
            return y;
          },
          200, gen);
      CHECK(b.alpha.lo <= 0.4);
      CHECK(b.alpha.hi >= 0.4);
      CHECK(b.r_squared == doctest::Approx(1.0).epsilon(1e-9));
      return b.alpha.hi - b.alpha.lo;
    };
    CHECK(width(0.001) < width(0.01));
  }

  TEST_CASE("percentile interval: order statistics with interpolation") {
    std::vector<double> v;
    for (int i = 0; i <= 100; ++i) v.push_back(100 - i);  // unsorted on purpose
    const Interval i = percentile_interval(v, 0.9);
    CHECK(i.lo == doctest::Approx(5));
    CHECK(i.hi == doctest::Approx(95));
    CHECK_THROWS_AS(percentile_interval({}), Error);
  }

  TEST_CASE("IsoFLOP profiles: the optimum of a known loss surface") {
    // L(N, D) = 1 + 50 N^-0.5 + 50 D^-0.5: with D = C / 6N the minimum over N is at
    // N = D, i.e. N_opt = sqrt(C / 6): exponent 0.5.
    std::vector<LossCurve> curves;
    for (double n : log_spaced(1e2, 1e6, 13)) {
      LossCurve c{n, {}, {}};
      for (double d : log_spaced(1e2, 1e6, 40)) {
        c.tokens.push_back(d);
        c.loss.push_back(1 + 50 / std::sqrt(n) + 50 / std::sqrt(d));
      }
      curves.push_back(c);
    }
    CHECK(loss_at_tokens(curves[0], 50) != loss_at_tokens(curves[0], 50));  // NaN outside
    const auto profiles = iso_flop_profiles(curves, log_spaced(6e6, 6e10, 5));
    REQUIRE(profiles.size() == 5);
    std::vector<double> cs, ns;
    for (const auto& p : profiles) {
      REQUIRE(p.interior);
      CHECK(p.n_opt == doctest::Approx(std::sqrt(p.compute / 6)).epsilon(0.1));
      cs.push_back(p.compute);
      ns.push_back(p.n_opt);
    }
    CHECK(log_log_slope(cs, ns) == doctest::Approx(0.5).epsilon(0.05));
    std::vector<LossCurve> unsorted{curves[1], curves[0], curves[2]};
    CHECK_THROWS_AS(iso_flop_profiles(unsorted, {1e8}), Error);
  }
}

}  // namespace attn::experiments
