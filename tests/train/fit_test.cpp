// fit: a tiny classifier learns; a diverging run stops naming the variant and the step; early
// stop at a target; the same weights, bit for bit, as the hand-written loop it replaces; the
// data-parallel path (ranks as threads) and its refusal; BatchPart's rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/linear.h"
#include "tests/train/distributed/thread_group.h"
#include "train/fit.h"
#include "train/optim/adam.h"
#include "train/optim/clip.h"
#include "train/schedule.h"

namespace attn::train {

namespace {

// Points x in R^4 labelled by which of 3 fixed directions they lie most along: a linear
// classifier can reach 100%, a fresh one is near chance (1/3).
struct Blobs {
  Tensor x, labels;  // (N,4), (N)
};

Blobs draw_blobs(int64_t n, Generator& gen) {
  static const float dirs[3][4] = {{1, 0, 0, 1}, {0, 1, -1, 0}, {-1, -1, 0, 0.5f}};
  Blobs b{Tensor::randn({n, 4}, gen), Tensor({n})};
  for (int64_t i = 0; i < n; ++i) {
    int best = 0;
    double best_dot = -1e30;
    for (int c = 0; c < 3; ++c) {
      double dot = 0;
      for (int k = 0; k < 4; ++k) dot += dirs[c][k] * b.x[i * 4 + k];
      if (dot > best_dot) best_dot = dot, best = c;
    }
    b.labels[i] = static_cast<real>(best);
  }
  return b;
}

double accuracy(nn::Linear& model, const Blobs& b) {
  NoGrad off;
  const Tensor logits = model.forward(Var::constant(b.x)).value();
  int64_t right = 0;
  for (int64_t i = 0; i < b.labels.numel(); ++i) {
    const real* row = logits.data() + i * 3;
    right += std::max_element(row, row + 3) - row == static_cast<int64_t>(b.labels[i]);
  }
  return static_cast<double>(right) / static_cast<double>(b.labels.numel());
}

// The loss of one step on a fresh batch of `batch` points; this rank's rows only.
LossFn blob_loss(nn::Linear& model, Generator& gen, int64_t batch) {
  return [&model, &gen, batch](const BatchPart& part) {
    const Blobs b = draw_blobs(batch, gen);
    return StepLoss{
        cross_entropy(model.forward(Var::constant(part.rows(b.x))), part.rows(b.labels))};
  };
}

FitSettings blob_settings(int64_t steps) {
  FitSettings s;
  s.name = "linear";
  s.steps = steps;
  s.batch_size = 32;
  s.optimizer = {.lr = 0.05, .schedule = "cosine", .warmup = 5, .clip = 1.0};
  return s;
}

std::vector<float> weights_of(const nn::Module& m) {
  std::vector<float> w;
  for (const Var& p : m.parameters())
    w.insert(w.end(), p.value().data(), p.value().data() + p.numel());
  return w;
}

}  // namespace

TEST_SUITE("train") {
  TEST_CASE("fit: a linear classifier learns separable blobs from chance to near 100%") {
    Generator init(1), data(2), eval(3);
    nn::Linear model(4, 3, true, init);
    const Blobs heldout = draw_blobs(500, eval);
    const double before = accuracy(model, heldout);
    const TrainResult r = fit(model, blob_settings(150), blob_loss(model, data, 32), [&](int64_t) {
      return Metrics{{"accuracy", accuracy(model, heldout)}};
    });
    CHECK(before < 0.7);
    CHECK(r.last_step == 150);
    CHECK(r.losses.size() == 150);
    // The last 10 steps' mean loss is far below the first step's (about ln 3 = 1.1).
    double tail = 0;
    for (size_t i = 140; i < 150; ++i) tail += r.losses[i] / 10;
    CHECK(tail < 0.5 * r.losses.front());
    CHECK(r.final_eval.at("accuracy") > 0.95);
  }

  TEST_CASE("fit: an exploding run stops with TrainingDiverged naming the variant and the step") {
    // loss = w^2 with SGD at lr 10: w <- w - 20 w = -19 w, so the loss grows 361x a step from 1;
    // its moving average (0.9 m + 0.1 loss) passes 1000x the first loss at step 3.
    Generator init(1);
    nn::Linear model(1, 1, false, init);
    model.parameters()[0].value()[0] = 1;
    FitSettings s;
    s.name = "far too fast";
    s.steps = 50;
    s.optimizer = {.kind = "sgd", .lr = 10};
    const auto loss = [&](const BatchPart&) {
      const Var w = model.parameters()[0];
      return StepLoss{sum(mul(w, w))};
    };
    try {
      fit(model, s, loss);
      FAIL("no TrainingDiverged");
    } catch (const TrainingDiverged& e) {
      CHECK(e.step() == 3);
      CHECK(std::string(e.what()).find("variant 'far too fast'") != std::string::npos);
      CHECK(std::string(e.what()).find("at step 3") != std::string::npos);
    }
  }

  TEST_CASE("fit: a non-finite loss stops the run at its step") {
    Generator init(1);
    nn::Linear model(1, 1, false, init);
    FitSettings s;
    s.name = "nan";
    s.steps = 10;
    int calls = 0;
    const auto loss = [&](const BatchPart&) {
      const Var w = model.parameters()[0];
      return StepLoss{mul_scalar(sum(w), ++calls == 4 ? NAN : 1.0f)};
    };
    try {
      fit(model, s, loss);
      FAIL("no TrainingDiverged");
    } catch (const TrainingDiverged& e) {
      CHECK(e.step() == 4);
      CHECK(std::string(e.what()).find("variant 'nan'") != std::string::npos);
    }
  }

  TEST_CASE("fit: stops early once the evaluation reaches the target") {
    Generator init(1), data(2), eval(3);
    nn::Linear model(4, 3, true, init);
    const Blobs heldout = draw_blobs(500, eval);
    FitSettings s = blob_settings(1000);
    s.eval_every = 10;
    s.target_metric = "accuracy";
    s.target_value = 0.9;
    const TrainResult r = fit(model, s, blob_loss(model, data, 32), [&](int64_t) {
      return Metrics{{"accuracy", accuracy(model, heldout)}};
    });
    CHECK(r.reached_target);
    CHECK(r.last_step < 1000);
    CHECK(r.last_step % 10 == 0);
    CHECK(r.final_eval.at("accuracy") >= 0.9);
    // The evaluation before the last one had not reached it.
    REQUIRE(r.evals.size() >= 2);
    CHECK(r.evals[r.evals.size() - 2].second.at("accuracy") < 0.9);
  }

  TEST_CASE("fit: the same weights, bit for bit, as the hand-written loop it replaced") {
    // The loop mqa-gqa, depth-hops and length-extrapolation wrote by hand: Adam, cosine
    // schedule with warm-up, clipping at 1.
    const int64_t steps = 40;
    Generator init_a(7), data_a(8);
    nn::Linear hand(4, 3, true, init_a);
    {
      const std::vector<Var> params = hand.parameters();
      Adam opt(params, {.lr = 0.05});
      const auto sched = make_schedule({.kind = "cosine", .lr = 0.05, .warmup = 5, .total = steps});
      for (int64_t s = 1; s <= steps; ++s) {
        const Blobs b = draw_blobs(32, data_a);
        opt.zero_grad();
        Var loss = cross_entropy(hand.forward(Var::constant(b.x)), b.labels);
        loss.backward();
        clip_grad_norm(params, 1.0);
        opt.set_lr(sched->lr(s));
        opt.step();
      }
    }
    Generator init_b(7), data_b(8);
    nn::Linear fitted(4, 3, true, init_b);
    fit(fitted, blob_settings(steps), blob_loss(fitted, data_b, 32));
    CHECK(weights_of(hand) == weights_of(fitted));
  }

  TEST_CASE("fit: two ranks (threads) end with the one-process weights, and refuse when told") {
    const int64_t steps = 30;
    Generator init(7), data(8);
    nn::Linear alone(4, 3, true, init);
    fit(alone, blob_settings(steps), blob_loss(alone, data, 32));
    const std::vector<float> expected = weights_of(alone);
    std::vector<std::vector<float>> got(2);
    distributed::testing::ThreadGroup(2).run([&](distributed::Communicator& comm) {
      Generator rank_init(7), rank_data(8);
      nn::Linear model(4, 3, true, rank_init);
      Fit f(model, blob_settings(steps), blob_loss(model, rank_data, 32), &comm);
      f.run();
      got[static_cast<size_t>(comm.rank())] = weights_of(model);
    });
    CHECK(got[0] == got[1]);  // the summed gradient is the same bits on every rank
    REQUIRE(got[0].size() == expected.size());
    // Two half-batch gradients summed round differently from one whole-batch gradient: a few
    // float32 ulps per step, compounded over 30 Adam steps of size <= lr = 0.05.
    for (size_t i = 0; i < expected.size(); ++i)
      CHECK(got[0][i] == doctest::Approx(expected[i]).epsilon(1e-3));

    FitSettings refused = blob_settings(steps);
    refused.not_data_parallel = "its loss is not a mean over examples";
    distributed::testing::ThreadGroup(2).run([&](distributed::Communicator& comm) {
      Generator rank_init(7), rank_data(8);
      nn::Linear model(4, 3, true, rank_init);
      CHECK_THROWS_WITH_AS(Fit(model, refused, blob_loss(model, rank_data, 32), &comm),
                           doctest::Contains("its loss is not a mean over examples"), UsageError);
    });
  }

  TEST_CASE("fit: BatchPart keeps its rows, whole parts are the tensor itself") {
    const Tensor x = Tensor::from_vector({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
    const BatchPart whole{0, 4, 4};
    CHECK(whole.rows(x).data() == x.data());
    const BatchPart second{2, 4, 4};
    const Tensor r = second.rows(x);
    CHECK(r.shape() == Shape{2, 2});
    CHECK(std::vector<float>(r.data(), r.data() + 4) == std::vector<float>{4, 5, 6, 7});
    CHECK(second.items(std::vector<int>{1, 2, 3, 4}) == std::vector<int>{3, 4});
    CHECK_THROWS_AS(second.rows(Tensor({3, 2})), Error);
  }

  TEST_CASE("fit: bad settings are refused naming the variant") {
    Generator init(1), data(2);
    nn::Linear model(4, 3, true, init);
    FitSettings s = blob_settings(0);
    CHECK_THROWS_WITH_AS(fit(model, s, blob_loss(model, data, 32)),
                         doctest::Contains("fit 'linear': steps must be > 0"), Error);
    s = blob_settings(5);
    s.optimizer.kind = "adagrad";
    CHECK_THROWS_WITH_AS(fit(model, s, blob_loss(model, data, 32)),
                         doctest::Contains("unknown optimizer 'adagrad'"), Error);
  }
}

}  // namespace attn::train
