// The spread measures of experiments/common/distribution.h: entropy of one row, and the mean
// entropy and mean largest weight over the rows of a tensor.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autograd/error.h"
#include "experiments/common/distribution.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("entropy: 0 for one-hot, log n for uniform, zeros contribute nothing") {
    const std::vector<real> one_hot{0, 1, 0, 0}, uniform{0.25f, 0.25f, 0.25f, 0.25f};
    CHECK(entropy(one_hot.data(), 4) == 0.0);
    CHECK(entropy(uniform.data(), 4) == doctest::Approx(std::log(4.0)).epsilon(1e-12));
    // [1/2, 1/4, 1/4, 0]: (1/2) log 2 + 2 (1/4) log 4 = 1.5 log 2
    const std::vector<real> mixed{0.5f, 0.25f, 0.25f, 0};
    CHECK(entropy(mixed.data(), 4) == doctest::Approx(1.5 * std::log(2.0)).epsilon(1e-12));
  }

  TEST_CASE("mean_row_entropy and mean_row_max average over every row of a (..., C) tensor") {
    // rows: one-hot (H 0, max 1) and uniform over 2 of 2 (H log 2, max 1/2), as (2, 1, 2)
    const Tensor rows = Tensor::from_vector({2, 1, 2}, {1, 0, 0.5f, 0.5f});
    CHECK(mean_row_entropy(rows) == doctest::Approx(std::log(2.0) / 2).epsilon(1e-12));
    CHECK(mean_row_max(rows) == doctest::Approx(0.75).epsilon(1e-12));
    CHECK_THROWS_AS(mean_row_entropy(Tensor::scalar(1)), Error);
  }
}

}  // namespace attn::experiments
