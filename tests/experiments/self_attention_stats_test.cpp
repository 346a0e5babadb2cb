// self_attention_stats (identity-lookup, qkv-identity): the diagonal mass against the closed form
// for one-hot rows, and a short vector whose own score loses to a longer neighbour's.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "experiments/common/self_attention_stats.h"
#include "experiments/common/values.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("self_attention_stats: one-hot rows give e^s / (e^s + T - 1) on the diagonal") {
    const double s = 1 / std::sqrt(4.0);
    const SelfAttentionStats st = self_attention_stats(one_hot_rows(4, 4), s);
    CHECK(st.mean_diagonal == doctest::Approx(std::exp(s) / (std::exp(s) + 3)).epsilon(1e-6));
    CHECK(st.diagonal_is_max == 1.0);
    CHECK(st.score_asymmetry == 0.0);
    CHECK(st.weight_asymmetry == 0.0);  // equal norms: equal denominators
    CHECK_THROWS_AS(one_hot_rows(5, 4), Error);
  }

  TEST_CASE("self_attention_stats: a longer neighbour can beat a token's own score") {
    // x0 = (1, 0), x1 = (3, 1): x0 . x1 = 3 > |x0|^2 = 1, while x1's own score 10 leads its row.
    const Tensor x = matrix_from(2, 2, {1, 0, 3, 1});
    const SelfAttentionStats st = self_attention_stats(x, 1.0);
    CHECK(st.diagonal_is_max == 0.5);
    CHECK(st.score_asymmetry == 0.0);
    // Row 0: softmax(1, 3); row 1: softmax(3, 10). A_01 != A_10 though S_01 = S_10.
    const double a01 = std::exp(3.0) / (std::exp(1.0) + std::exp(3.0));
    const double a10 = std::exp(3.0) / (std::exp(3.0) + std::exp(10.0));
    CHECK(st.weight_asymmetry == doctest::Approx(a01 - a10).epsilon(1e-6));
  }
}

}  // namespace attn::experiments
