// The shared body of the mixer comparisons: shapes, parameter names, and causality (with causal
// mixers, changing a later token leaves every earlier position's logits unchanged).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "autograd/tape.h"
#include "experiments/common/mixer_model.h"

namespace attn::experiments {

namespace {

MixerModelOptions small_options() {
  return {.vocab = 7, .max_len = 16, .d_model = 8, .layers = 2, .classes = 5};
}

Tensor ids_of(const std::vector<real>& v) {
  return Tensor::from_vector({1, static_cast<int64_t>(v.size())}, v);
}

// Largest |a - b| over the first `positions` positions of two (1,T,C) outputs.
double prefix_difference(const Tensor& a, const Tensor& b, int64_t positions, int64_t classes) {
  double worst = 0;
  for (int64_t i = 0; i < positions * classes; ++i)
    worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
  return worst;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("MixerModel: shapes, names, and the factory sees every layer index") {
    Generator gen(3);
    std::vector<int64_t> seen;
    MixerModel m(
        small_options(),
        [&](int64_t layer, Generator& g) {
          seen.push_back(layer);
          return softmax_mixer(8, 2, true, g);
        },
        gen);
    CHECK(seen == std::vector<int64_t>{0, 1});
    NoGrad off;
    const Tensor ids = ids_of({1, 2, 3, 4, 5, 6});
    CHECK(m.forward_positions(ids).shape() == Shape{1, 6, 5});
    CHECK(m.forward(ids).shape() == Shape{1, 5});
    // The last-position read-out is the last row of the per-position logits.
    const Tensor all = m.forward_positions(ids).value(), last = m.forward(ids).value();
    for (int64_t c = 0; c < 5; ++c) CHECK(double(last[c]) == doctest::Approx(all[5 * 5 + c]));
    bool has_mixer = false;
    for (const auto& [name, p] : m.named_parameters())
      has_mixer = has_mixer || name == "layers.1.mixer.q_proj.weight";
    CHECK(has_mixer);
  }

  TEST_CASE("MixerModel: causal mixers keep earlier positions blind to later tokens") {
    for (const std::string kind : {"softmax", "linear", "window"}) {
      CAPTURE(kind);
      Generator gen(4);
      MixerModel m(
          small_options(),
          [&](int64_t, Generator& g) {
            if (kind == "softmax") return softmax_mixer(8, 2, true, g);
            if (kind == "linear") return linear_mixer(8, 2, true, g);
            return window_mixer(8, 2, 2, true, g);
          },
          gen);
      NoGrad off;
      const Tensor a = m.forward_positions(ids_of({1, 2, 3, 4, 5, 6})).value();
      const Tensor b = m.forward_positions(ids_of({1, 2, 3, 4, 0, 0})).value();
      CHECK(prefix_difference(a, b, 4, 5) == 0.0);
      CHECK(prefix_difference(a, b, 6, 5) > 1e-4);  // the changed positions do change
    }
  }

  TEST_CASE("MixerModel: without a feed-forward block or positions") {
    Generator gen(5);
    MixerModelOptions o = small_options();
    o.ff_mult = 0;
    o.positions = false;
    MixerModel m(
        o, [](int64_t, Generator& g) { return linear_mixer(8, 2, false, g); }, gen);
    for (const auto& [name, p] : m.named_parameters()) {
      CAPTURE(name);
      CHECK(name.find("ff") == std::string::npos);
    }
    NoGrad off;
    CHECK(m.forward(ids_of({1, 2, 3})).shape() == Shape{1, 5});
  }
}

}  // namespace attn::experiments
