// Position-embedding similarity of a ViT: cosines of the patch rows, and their correlation with
// the grid distance.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "experiments/common/vit_figures.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("position similarity: cosines of the centred patch rows, [CLS] left out") {
    // [CLS] row, then patches (6,5), (5,6), (4,4) around their mean (5,5): centred (1,0), (0,1),
    // (-1,-1) -> cosines 0, -1/sqrt 2 and -1/sqrt 2.
    const Tensor pos = Tensor::from_vector({1, 4, 2}, {9, 9, 6, 5, 5, 6, 4, 4});
    const Tensor sim = position_similarity(pos);
    REQUIRE(sim.shape() == Shape{3, 3});
    for (int64_t i = 0; i < 3; ++i) CHECK(sim[i * 3 + i] == doctest::Approx(1));
    CHECK(sim[0 * 3 + 1] == doctest::Approx(0));
    CHECK(sim[0 * 3 + 2] == doctest::Approx(-1 / std::sqrt(2.0)));
    CHECK(sim[2 * 3 + 1] == doctest::Approx(-1 / std::sqrt(2.0)));
    CHECK_THROWS_AS(position_similarity(Tensor::zeros({3, 2})), Error);
  }

  TEST_CASE("similarity-distance correlation: -1 for similarity falling with distance, +1 rising") {
    const int64_t g = 3, n = 9;
    Tensor falling({n, n}), rising({n, n}), flat = Tensor::zeros({n, n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double d = std::hypot(double(i / g - j / g), double(i % g - j % g));
        falling[i * n + j] = static_cast<real>(1 - 0.1 * d);
        rising[i * n + j] = static_cast<real>(2 * d);
      }
    CHECK(similarity_distance_correlation(falling, g) == doctest::Approx(-1).epsilon(1e-5));
    CHECK(similarity_distance_correlation(rising, g) == doctest::Approx(1).epsilon(1e-5));
    CHECK(similarity_distance_correlation(flat, g) == 0);
    CHECK_THROWS_AS(similarity_distance_correlation(flat, 2), Error);
    // Row-column structure: 1 within a row or column, 0 elsewhere -> a gap of 1.
    Tensor lines = Tensor::zeros({n, n});
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) lines[i * n + j] = i / g == j / g || i % g == j % g;
    CHECK(same_line_gap(lines, g) == doctest::Approx(1));
    CHECK(same_line_gap(flat, g) == 0);
  }
}

}  // namespace attn::experiments
