// experiments/common/row_interventions: the replacements keep hidden keys at 0 and sum to 1,
// the adversarial objective's hand-written gradient matches central differences, and the search
// finds a far-away row with the same output where one exists.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "experiments/common/row_interventions.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("row interventions: permuted and uniform rows keep hidden keys at 0") {
    Generator gen(3);
    const std::vector<double> a0{0.5, 0.0, 0.3, 0.2, 0.0};  // keys 1 and 4 hidden
    const auto p = permuted_row(a0, gen);
    const auto u = uniform_row(a0);
    CHECK(p[1] == 0);
    CHECK(p[4] == 0);
    CHECK(u[1] == 0);
    CHECK(u[2] == doctest::Approx(1.0 / 3));
    auto sorted = [](std::vector<double> x) {
      std::sort(x.begin(), x.end());
      return x;
    };
    CHECK(sorted(p) == sorted(a0));  // the same weights, moved
    CHECK(total_variation(a0, a0) == 0);
    CHECK(js_divergence(a0, a0) == 0);
    // Disjoint supports: TV 1 and JS log 2, the largest values.
    CHECK(total_variation({1, 0}, {0, 1}) == doctest::Approx(1));
    CHECK(js_divergence({1, 0}, {0, 1}) == doctest::Approx(std::log(2.0)));
  }

  TEST_CASE("row interventions: the adversarial gradient matches central differences") {
    Generator gen(4);
    const int64_t n = 5, d = 3;
    std::vector<double> v(n * d), z(n), a0{0.4, 0.1, 0.0, 0.3, 0.2};
    for (auto& x : v) x = gen.uniform() * 2 - 1;
    for (auto& x : z) x = gen.uniform() * 2 - 1;
    std::vector<double> dz;
    adversarial_objective(z, a0, v, d, 0.3, &dz);
    CHECK(dz[2] == 0);  // the hidden key gets no gradient
    const double h = 1e-6;
    for (int64_t j = 0; j < n; ++j) {
      if (j == 2) continue;
      auto zp = z, zm = z;
      zp[j] += h, zm[j] -= h;
      const double fd =
          (adversarial_objective(zp, a0, v, d, 0.3) - adversarial_objective(zm, a0, v, d, 0.3)) /
          (2 * h);
      CHECK(dz[j] == doctest::Approx(fd).epsilon(1e-6));
    }
  }

  TEST_CASE("row interventions: the search finds a distant row with the same output") {
    // Keys 0 and 1 hold the same value, keys 2 and 3 another: moving mass from key 0 to key 1
    // changes nothing in the output, so a row far from a0 with a0's output exists.
    const int64_t d = 2;
    const std::vector<double> v{1, 0, 1, 0, 0, 1, 0, 1};
    const std::vector<double> a0{0.7, 0.1, 0.1, 0.1};
    const std::vector<double> start{0.1, 0.1, 0.7, 0.1};  // a permutation: output far away
    CHECK(relative_output_change(a0, start, v, d) > 0.5);
    const auto adv = adversarial_row(a0, v, d, start, {.steps = 300, .lr = 1.0, .lambda = 0.1});
    CHECK(std::accumulate(adv.begin(), adv.end(), 0.0) == doctest::Approx(1));
    CHECK(relative_output_change(a0, adv, v, d) < 0.05);
    CHECK(total_variation(a0, adv) > 0.3);
  }
}

}  // namespace attn::experiments
