// The recall model scaling-variance trains: with and without the 1/sqrt(d) factor it holds the
// same weights and differs only in the temperature of its scores; a short run reports every step.
#include <doctest/doctest.h>

#include <cmath>

#include "experiments/common/pair_memory_model.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("PairMemoryModel: the unscaled scores are the scaled ones times sqrt(d)") {
    const int64_t d = 4;
    const data::RecallTask task({.num_pairs = 3});
    Generator g1(5), g2(5), data_gen(6);
    PairMemoryModel scaled(task.tokenizer().vocab_size(), d, true, g1);
    PairMemoryModel unscaled(task.tokenizer().vocab_size(), d, false, g2);
    std::vector<data::Example> batch{task.sample(data_gen), task.sample(data_gen)};
    NoGrad off;
    CHECK(scaled.forward(batch).shape() == Shape{2, task.tokenizer().vocab_size()});
    unscaled.forward(batch);
    const Tensor ws = scaled.last_weights(), wu = unscaled.last_weights();  // (2,1,1,3)
    REQUIRE(ws.shape() == Shape{2, 1, 1, 3});
    // Scores up to a per-row constant: log w. Unscaled differences = sqrt(d) x scaled ones.
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 1; j < 3; ++j) {
        const double ds = std::log(double(ws[b * 3 + j])) - std::log(double(ws[b * 3]));
        const double du = std::log(double(wu[b * 3 + j])) - std::log(double(wu[b * 3]));
        CHECK(du == doctest::Approx(std::sqrt(double(d)) * ds).epsilon(1e-4).scale(1));
      }
  }

  TEST_CASE("train_pair_memory: one loss and gradient norm per step, evaluations on schedule") {
    PairMemoryConfig c;
    c.d = 8;
    c.pairs = 2;
    c.steps = 5;
    c.batch = 4;
    c.eval_every = 2;
    c.eval_size = 6;
    const RecallRun r = train_pair_memory(c, 3);
    CHECK(r.losses.size() == 5);
    CHECK(r.score_grad_norm.size() == 5);
    CHECK(r.eval_steps == std::vector<double>{0, 2, 4, 5});
    for (double l : r.losses) CHECK(std::isfinite(l));
    for (double a : r.eval_accuracy) CHECK((a >= 0 && a <= 1));
    CHECK(r.score_grad_norm[0] > 0);
  }
}

}  // namespace attn::experiments
