// Reading Delta out of a MixerModel's first S6 layer (experiments/common/s6_probe.h): a case with
// a known answer (dt_proj's weight zeroed: Delta = softplus(dt_proj.bias) at every token), the
// locality of Delta (it sees the current token and the convolution's d_conv - 1 before it, no
// more), and the refusal of a model whose first mixer is not S6.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "experiments/common/s6_probe.h"
#include "experiments/common/ssm_mixer.h"

namespace attn::experiments {

namespace {

MixerModelOptions tiny() {
  return {.vocab = 9, .max_len = 16, .d_model = 8, .layers = 2, .classes = 9};
}

Tensor ids_of(const std::vector<real>& v) {
  return Tensor::from_vector({1, static_cast<int64_t>(v.size())}, v);
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("first_layer_delta: shape, the zero-weight case, and locality (conv kernel 4)") {
    Generator gen(11);
    MixerModel m(
        tiny(), [](int64_t, Generator& g) { return s6_mixer(8, 4, g); }, gen);
    const std::vector<real> a = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4};
    std::vector<real> b = a;
    b[5] = 8;  // change one token
    const Tensor da = first_layer_delta(m, ids_of(a)), db = first_layer_delta(m, ids_of(b));
    const int64_t e = 16;  // expand 2 x d_model 8
    REQUIRE(da.shape() == Shape{1, 12, e});
    for (int64_t i = 0; i < da.numel(); ++i) CHECK(da[i] > 0);  // softplus
    for (int64_t t = 0; t < 12; ++t) {
      double change = 0;
      for (int64_t c = 0; c < e; ++c)
        change += std::abs(double(da[t * e + c]) - double(db[t * e + c]));
      CAPTURE(t);
      if (t < 5 || t > 8)
        CHECK(change == 0.0);  // before it, or beyond the kernel's reach
      else
        CHECK(change > 0.0);
    }
    // Zero dt_proj's weight: Delta no longer depends on the token, softplus(bias) per channel.
    for (const auto& [name, p] : m.named_parameters())
      if (name == "layers.0.mixer.dt_proj.weight") {
        Tensor w = p.value();
        for (int64_t i = 0; i < w.numel(); ++i) w[i] = 0;
      }
    const Tensor d0 = first_layer_delta(m, ids_of(a));
    Tensor bias;
    for (const auto& [name, p] : m.named_parameters())
      if (name == "layers.0.mixer.dt_proj.bias") bias = p.value();
    REQUIRE(bias.numel() == e);
    for (int64_t t = 0; t < 12; ++t)
      for (int64_t c = 0; c < e; ++c)
        CHECK(double(d0[t * e + c]) == doctest::Approx(std::log1p(std::exp(double(bias[c])))));
  }

  TEST_CASE("first_layer_delta refuses a model without S6 in the first block") {
    Generator gen(2);
    MixerModel m(
        tiny(), [](int64_t, Generator& g) { return softmax_mixer(8, 2, true, g); }, gen);
    CHECK_THROWS_AS(first_layer_delta(m, ids_of({1, 2, 3})), Error);
  }
}

}  // namespace attn::experiments
