// scaling_run (experiments/common/scaling_run.h): the parameter count a scaling law uses
// (Kaplan et al.'s non-embedding N, 12 L d^2 plus biases and norms for our GPT block), and one
// short run's bookkeeping: evaluations at the asked steps, tokens, equal groups.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "experiments/common/scaling_run.h"

namespace attn::experiments {

namespace {

train::TrainConfig tiny_lm(int64_t d, int64_t layers) {
  train::TrainConfig t;
  t.task = "charlm";
  t.model = "gpt";
  t.d_model = d;
  t.nhead = 1;
  t.num_layers = layers;
  t.dim_ff = 4 * d;
  t.block_len = 16;
  t.batch_size = 4;
  t.steps = 6;
  t.schedule = "constant";
  t.eval_size = 12;
  t.progress = "off";
  return t;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("non-embedding parameters leave out tok_emb, pos_emb and lm_head") {
    CHECK(non_embedding_parameters({{"tok_emb.weight", 100},
                                    {"pos_emb.weight", 50},
                                    {"layers.0.self_attn.q_proj.weight", 64},
                                    {"norm.weight", 8},
                                    {"lm_head.weight", 100}}) == 72);
  }

  TEST_CASE("scaling run: N = 12 L d^2 + 13 L d + 2 d, evaluations and tokens as asked") {
    for (const auto& [d, layers] : {std::pair<int64_t, int64_t>{8, 1}, {16, 2}}) {
      const ScalingCurve c = train_scaling_run(tiny_lm(d, layers), {2, 6}, 3);
      // Per block: q, k, v, o (4 d^2 + 4 d), feed-forward d -> 4d -> d (8 d^2 + 5 d), two
      // layer norms (4 d); then the final norm (2 d).
      CHECK(c.non_embedding_params == 12 * layers * d * d + 13 * layers * d + 2 * d);
      CHECK(c.params > c.non_embedding_params);
      CHECK(c.steps == std::vector<int64_t>{2, 6});
      CHECK(c.tokens == std::vector<int64_t>{2 * 4 * 16, 6 * 4 * 16});
      REQUIRE(c.group_loss.size() == 2);
      CHECK(c.group_loss[1].size() == 3);
      for (const auto& g : c.group_loss)
        for (double v : g) CHECK(std::isfinite(v));
      CHECK(c.train_chars > 0);
    }
    CHECK_THROWS_AS(train_scaling_run(tiny_lm(8, 1), {3, 2}, 3), Error);
    CHECK_THROWS_AS(train_scaling_run(tiny_lm(8, 1), {7}, 3), Error);
    CHECK_THROWS_AS(train_scaling_run(tiny_lm(8, 1), {6}, 13), Error);
  }
}

}  // namespace attn::experiments
