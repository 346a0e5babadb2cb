// attention-zoo's recurrent variants (lightning, hybrid-lightning, titans-mac): each builds in a
// MixerModel, runs, and is causal; the hybrid puts softmax where its rule says.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/tape.h"
#include "experiments/common/mixer_model.h"
#include "experiments/common/zoo_variants.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("hybrid-lightning: softmax in every 8th layer and in the last") {
    std::vector<int64_t> softmax_layers;
    for (int64_t l = 0; l < 16; ++l)
      if (hybrid_layer_is_softmax(l, 16)) softmax_layers.push_back(l);
    CHECK(softmax_layers == std::vector<int64_t>{7, 15});
    CHECK(hybrid_layer_is_softmax(1, 2));
    CHECK_FALSE(hybrid_layer_is_softmax(0, 2));
    CHECK(hybrid_layer_is_softmax(9, 10));
    CHECK_FALSE(hybrid_layer_is_softmax(8, 10));
  }

  TEST_CASE("mixer_parameter_note: counts per variant and the hybrid's layer pattern") {
    const ZooShape shape{.d_model = 8, .nhead = 2, .max_len = 16, .layers = 2};
    const std::string note = mixer_parameter_note(zoo_recurrent_variants(), shape);
    // q/k/v/out projections with biases, per layer: 4 (d^2 + d) = 288; two layers.
    CHECK(note.find("lightning 576,") != std::string::npos);
    CHECK(note.find("hybrid-lightning 576,") != std::string::npos);
    // titans-mac adds mem_q/k/v (3 d^2), M0 (d^2), 2 persistent rows (2 d) and 3 gate logits.
    const int64_t titans = 2 * (288 + 3 * 64 + 64 + 16 + 3);
    CHECK(note.find("titans-mac " + std::to_string(titans) + ".") != std::string::npos);
    CHECK(note.find("layers: lightning, softmax (") != std::string::npos);
  }

  TEST_CASE("zoo recurrent variants: build, run and stay causal in a MixerModel") {
    const std::vector<ZooVariant> variants = zoo_recurrent_variants();
    std::vector<std::string> names;
    for (const ZooVariant& v : variants) names.push_back(v.name);
    CHECK(names == std::vector<std::string>{"lightning", "hybrid-lightning", "titans-mac"});
    const ZooShape shape{.d_model = 8, .nhead = 2, .max_len = 40, .layers = 2};
    const int64_t t = 37;  // more than two lightning blocks and Titans segments, not a multiple
    for (const ZooVariant& v : variants) {
      CAPTURE(v.name);
      CHECK(v.causal);
      CHECK(!v.source.empty());
      CHECK(!v.idea.empty());
      Generator gen(7);
      MixerModel m(
          {.vocab = 9, .max_len = 40, .d_model = 8, .layers = 2, .classes = 4},
          [&](int64_t l, Generator& g) { return v.make(shape, l, g); }, gen);
      std::vector<real> ids(t);
      for (int64_t i = 0; i < t; ++i) ids[i] = real(i % 9);
      const Tensor a = Tensor::from_vector({1, t}, ids);
      // A gradient reaches every parameter (the memory's gates and M0 included).
      Var logits = m.forward_positions(a);
      CHECK(logits.shape() == Shape{1, t, 4});
      sum(mul(logits, logits)).backward();
      int64_t touched = 0;
      for (const Var& p : m.parameters()) {
        double norm = 0;
        for (int64_t i = 0; i < p.grad().numel(); ++i) norm += std::abs(double(p.grad()[i]));
        touched += norm > 0;
      }
      CHECK(touched == static_cast<int64_t>(m.parameters().size()));
      NoGrad off;
      const Tensor ya = m.forward_positions(a).value();
      for (const int64_t changed : {5, 16, 20, 36}) {  // in a block, at block/segment starts
        CAPTURE(changed);
        std::vector<real> ids2 = ids;
        ids2[changed] = real((changed + 1) % 9);  // ids[i] = i % 9: a different token
        const Tensor yb = m.forward_positions(Tensor::from_vector({1, t}, ids2)).value();
        double before = 0, after = 0;
        for (int64_t i = 0; i < t * 4; ++i) {
          double& worst = i < changed * 4 ? before : after;
          worst = std::max(worst, std::abs(double(ya[i]) - double(yb[i])));
        }
        CHECK(before == 0.0);
        CHECK(after > 1e-5);
      }
    }
  }
}

}  // namespace attn::experiments
