// The decoding states of triangle-tradeoff: the bytes weighed from the state tensors follow the
// closed forms at every position, and the step-by-step outputs equal the parallel form (so the
// decoders are the models' own computation, not a stand-in).
#include <doctest/doctest.h>

#include <cstdint>

#include "experiments/common/decoding_state.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("decoding state: the KV cache grows by 2 L d floats per token") {
    Generator gen(1);
    const DecodingTrace s = decode_softmax(/*d_model=*/8, /*nhead=*/2, /*layers=*/3, 10, gen);
    REQUIRE(s.state_bytes.size() == 10);
    for (int64_t t = 1; t <= 10; ++t) {
      CHECK(s.state_bytes[t - 1] == softmax_state_bytes(8, 3, t));
      CHECK(s.state_bytes[t - 1] == 2 * 3 * 8 * t * 4);
    }
    CHECK(s.max_abs_diff < 1e-5);
  }

  TEST_CASE("decoding state: the window keeps the last w positions (w = 0: none)") {
    for (int64_t w : {0, 1, 4}) {
      Generator gen(2);
      const DecodingTrace s = decode_window(8, 2, w, /*layers=*/2, 9, gen);
      for (int64_t t = 1; t <= 9; ++t)
        CHECK(s.state_bytes[t - 1] == window_state_bytes(8, w, 2, t));
      CHECK(s.state_bytes.back() == 2 * 2 * 8 * w * 4);
      CHECK(s.max_abs_diff < 1e-5);  // the banded parallel path sees exactly t-w..t
    }
  }

  TEST_CASE("decoding state: linear attention and S6 keep a fixed size from the first token") {
    Generator gen(3);
    const DecodingTrace la = decode_linear(8, 2, 2, 7, gen);
    for (int64_t b : la.state_bytes) CHECK(b == 2 * 2 * (4 * 4 + 4) * 4);  // L H (D^2 + D) 4
    CHECK(la.max_abs_diff < 1e-5);
    const S6MixerOptions o{.expand = 2};
    const DecodingTrace s6 = decode_s6(8, /*d_state=*/4, o, 2, 7, gen);
    const int64_t e = 16;  // expand d_model
    for (int64_t b : s6.state_bytes) {
      CHECK(b == 2 * s6_state_bytes(8, 4, o));
      CHECK(b == 2 * (e * 4 + (o.d_conv - 1) * e) * 4);
    }
    CHECK(s6.max_abs_diff < 1e-5);
  }
}

}  // namespace attn::experiments
