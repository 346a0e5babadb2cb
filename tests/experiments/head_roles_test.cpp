// HeadRoleScores on hand-made attention weights: a perfect anti-diagonal cross-attention head is
// "backward" with score 1, a head split between two window tokens is "backward_window", uniform
// attention scores the chance level, and rows where two patterns name the same key are skipped.
#include <doctest/doctest.h>

#include "experiments/common/head_roles.h"

namespace attn::experiments {

namespace {

// (1,H,L+1,L) cross-attention weights for source length L: head 0 reads the mirrored position,
// head 1 splits 0.5/0.5 between it and the token just written, head 2 is uniform.
Tensor cross_weights(int64_t L) {
  const int64_t H = 3, T = L + 1;
  Tensor w({1, H, T, L});
  auto at = [&](int64_t h, int64_t q, int64_t k) -> real& { return w[(h * T + q) * L + k]; };
  for (int64_t q = 0; q < T; ++q) {
    const int64_t mirror = q < L ? L - 1 - q : 0, written = q >= 1 ? L - q : mirror;
    at(0, q, mirror) = 1;
    at(1, q, mirror) += real(0.5);
    at(1, q, written) += real(0.5);
    for (int64_t k = 0; k < L; ++k) at(2, q, k) = real(1.0 / static_cast<double>(L));
  }
  return w;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("head roles: backward, two-token window, uniform") {
    HeadRoleScores s(AttentionKind::kCross, 1, 3);
    s.add(0, cross_weights(8), 8);
    s.add(0, cross_weights(11), 11);
    const size_t backward = s.find("backward"), window = s.find("backward_window");
    CHECK(s.score(0, 0, backward) == doctest::Approx(1.0));
    CHECK(s.score(0, 0, s.find("forward")) == doctest::Approx(0.0));
    CHECK(s.role(0, 0, 0.5) == "backward");
    CHECK(s.score(0, 1, backward) == doctest::Approx(0.5));
    CHECK(s.score(0, 1, window) == doctest::Approx(1.0));
    CHECK(s.role(0, 1, 0.6) == "backward_window");
    // Uniform attention scores exactly the chance level, on every pattern.
    for (size_t i = 0; i < s.patterns().size(); ++i)
      CHECK(s.score(0, 2, i) == doctest::Approx(s.chance(i)));
    CHECK(s.chance(backward) > 1.0 / 11 - 1e-9);
    CHECK(s.chance(backward) < 1.0 / 8 + 1e-9);
    CHECK(s.role(0, 2, 0.5) == "mixed");
    int64_t layer = -1, head = -1;
    CHECK(s.best("backward", &layer, &head) == doctest::Approx(1.0));
    CHECK(head == 0);
    CHECK_THROWS(s.find("sideways"));
  }

  TEST_CASE("head roles: decoder self-attention patterns on a causal map") {
    // (1,1,T,T) with all mass on the previous token (row 0 on itself).
    const int64_t L = 6, T = L + 1;
    Tensor w({1, 1, T, T});
    for (int64_t q = 0; q < T; ++q) w[q * T + (q > 0 ? q - 1 : 0)] = 1;
    HeadRoleScores s(AttentionKind::kDecoderSelf, 1, 1);
    s.add(0, w, L);
    CHECK(s.score(0, 0, s.find("previous")) == doctest::Approx(1.0));
    CHECK(s.score(0, 0, s.find("diagonal")) == doctest::Approx(0.0));
    CHECK(s.role(0, 0, 0.5) == "previous");
    // Uniform over the visible keys 0..q is the chance level: mean of 1/(q+1) over counted rows.
    CHECK(s.chance(s.find("previous")) > 0.0);
    CHECK_THROWS(s.add(1, w, L));  // there is only layer 0
  }
}

}  // namespace attn::experiments
