// Mean attention distance: known weights give known distances in pixels.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "experiments/common/attention_distance.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("attention distance: self, neighbour, uniform and [CLS] mass") {
    // A 2x2 grid of 4-pixel patches: tokens 0 = [CLS], 1..4 = patches (0,0) (0,1) (1,0) (1,1).
    const int64_t t = 5;
    Tensor w = Tensor::zeros({1, 3, t, t});
    auto at = [&](int64_t h, int64_t q, int64_t k) -> real& { return w[(h * t + q) * t + k]; };
    for (int64_t q = 0; q < t; ++q) {
      at(0, q, q) = 1;                                      // head 0: every token attends to itself
      for (int64_t k = 1; k < t; ++k) at(1, q, k) = 0.25f;  // head 1: uniform over patches
      // head 2: half on [CLS], half on the patch to the right (or left) in the same grid row
      at(2, q, 0) = 0.5f;
      if (q > 0) at(2, q, q % 2 == 1 ? q + 1 : q - 1) = 0.5f;
    }
    AttentionDistance d(1, 3, 2, 4);
    Tensor ink = Tensor::zeros({1, 4});
    ink[0] = 1;  // only patch (0,0) holds ink
    d.add(0, w, &ink);
    CHECK(d.mean(0, 0) == doctest::Approx(0));
    CHECK(d.cls_mass(0, 0) == doctest::Approx(0));
    // Uniform: from any patch the distances are 0, 4, 4 and 4 sqrt 2.
    const double uniform = (8 + 4 * std::sqrt(2.0)) / 4;
    CHECK(d.mean(0, 1) == doctest::Approx(uniform));
    CHECK(uniform_attention_distance(2, 4) == doctest::Approx(uniform));
    CHECK(d.mean(0, 2) == doctest::Approx(4));  // the [CLS] half is left out and renormalised
    CHECK(d.cls_mass(0, 2) == doctest::Approx(0.5));
    CHECK(d.layer_mean(0) == doctest::Approx((0 + uniform + 4) / 3));
    // Ink shares: one query of four attends to the ink patch in heads 0 and 2; uniform puts a
    // quarter everywhere. The [CLS] query has no patch attention in heads 0 and 2.
    CHECK(d.ink_fraction() == doctest::Approx(0.25));
    for (int64_t h = 0; h < 3; ++h) CHECK(d.ink_mass(0, h) == doctest::Approx(0.25));
    CHECK(d.cls_ink_mass(0, 0) == doctest::Approx(0));
    CHECK(d.cls_ink_mass(0, 1) == doctest::Approx(0.25));
    CHECK(d.cls_ink_mass(0, 2) == doctest::Approx(0));
    CHECK_THROWS_AS(d.add(0, w, &w), Error);
    CHECK_THROWS_AS(d.add(0, Tensor::zeros({1, 3, 4, 4})), Error);
    CHECK_THROWS_AS(d.mean(1, 0), Error);
  }
}

}  // namespace attn::experiments
