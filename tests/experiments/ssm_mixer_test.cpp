// The S6 mixer in MixerModel: it plugs in under "layers.<l>.mixer" with Mamba's names, trains
// (a gradient reaches every parameter), is causal in the model, and its decoding-state size is
// the layer's fixed-size state in bytes.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "autograd/functional.h"
#include "experiments/common/ssm_mixer.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("s6_mixer: names, gradients, causality and state size in a MixerModel") {
    Generator gen(4);
    MixerModel m(
        {.vocab = 7, .max_len = 16, .d_model = 8, .layers = 2, .classes = 5},
        [](int64_t, Generator& g) { return s6_mixer(8, 4, g); }, gen);
    bool named = false;
    for (const auto& [name, p] : m.named_parameters()) named |= name == "layers.1.mixer.A_log";
    CHECK(named);

    const Tensor ids = Tensor::from_vector({1, 6}, {1, 2, 3, 4, 5, 6});
    Var loss = sum(m.forward_positions(ids));
    m.zero_grad();
    loss.backward();
    for (const auto& [name, p] : m.named_parameters()) {
      CAPTURE(name);
      CHECK(p.has_grad());
    }

    NoGrad off;
    const Tensor a = m.forward_positions(ids).value();
    const Tensor b = m.forward_positions(Tensor::from_vector({1, 6}, {1, 2, 3, 4, 0, 0})).value();
    for (int64_t i = 0; i < 4 * 5; ++i) CHECK(a[i] == b[i]);  // positions 0..3 unchanged

    // E = 16 channels: (d_conv-1) E + E N = 3*16 + 16*4 floats per sequence and layer.
    CHECK(s6_state_bytes(8, 4) == 4 * (3 * 16 + 16 * 4));
    CHECK(s6_state_bytes(8, 4, {.expand = 1}) == 4 * (3 * 8 + 8 * 4));
    nn::SelectiveSSM layer(8, gen, {.d_state = 4});
    CHECK(s6_state_bytes(8, 4) == 4 * layer.state_numel_per_sequence());
  }
}

}  // namespace attn::experiments
