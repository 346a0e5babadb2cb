// Trainer: early stop, metric files, divergence, resume of the logs; progress formatting.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <sstream>

#include "autograd/error.h"
#include "autograd/safetensors.h"
#include "tests/scratch_dir.h"
#include "train/progress.h"
#include "train/trainer.h"

namespace attn::train {

namespace {
std::string temp_dir() {
  return attn::testing::scratch_dir("trainer").string();
}

int count_lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}
}  // namespace

TEST_SUITE("train") {
  TEST_CASE("trainer evaluates periodically and stops once the target metric is reached") {
    const std::string dir = temp_dir();
    std::vector<int64_t> checkpoints;
    Trainer t(
        {.max_steps = 100,
         .eval_every = 10,
         .log_every = 5,
         .target_metric = "accuracy",
         .target_value = 0.5,
         .checkpoint_every = 20,
         .csv_path = dir + "/m.csv",
         .jsonl_path = dir + "/m.jsonl",
         .progress = ProgressMode::kOff},
        [](int64_t s) {
          return StepStats{1.0 / static_cast<double>(s), 10, 0.1};
        },
        [](int64_t s) {
          return Metrics{{"accuracy", static_cast<double>(s) / 60.0}};
        },
        [&](int64_t s) { checkpoints.push_back(s); });
    TrainResult r = t.run();
    CHECK(r.reached_target);
    CHECK(r.stop_reason == "target reached");
    CHECK(r.last_step == 30);  // 30/60 = 0.5 at the third evaluation
    CHECK(r.losses.size() == 30);
    CHECK(r.evals.size() == 3);
    CHECK(r.final_eval.at("accuracy") == doctest::Approx(0.5));
    CHECK(r.tokens == 300);
    CHECK(checkpoints == std::vector<int64_t>{20, 30});  // periodic, then at the stop
    const std::string csv = read_file(dir + "/m.csv");
    CHECK(csv.rfind("step,split,elapsed_s,loss,lr,tokens_per_s,accuracy\n", 0) == 0);
    CHECK(count_lines(csv) == 1 + 6 + 3);  // header, train rows every 5 steps, 3 evals
    CHECK(csv.find("\n5,train,") != std::string::npos);
    CHECK(csv.find("\n10,eval,,,,,0.166666667\n") != std::string::npos);
    const std::string jsonl = read_file(dir + "/m.jsonl");
    CHECK(count_lines(jsonl) == 9);
    CHECK(jsonl.find("{\"accuracy\":0.5,\"split\":\"eval\",\"step\":30}") != std::string::npos);
  }

  TEST_CASE("resuming a run keeps the earlier log records up to the checkpoint step") {
    const std::string dir = temp_dir();
    TrainerConfig c{.max_steps = 20,
                    .log_every = 2,
                    .csv_path = dir + "/m.csv",
                    .jsonl_path = dir + "/m.jsonl",
                    .progress = ProgressMode::kOff};
    auto step = [](int64_t s) { return StepStats{static_cast<double>(s), 1, 0}; };
    c.max_steps = 14;  // "interrupted" after step 14, last checkpoint at step 10
    Trainer(c, step).run();
    c.max_steps = 20;
    Trainer(c, step).run(10);
    const std::string jsonl = read_file(dir + "/m.jsonl");
    CHECK(count_lines(jsonl) == 10);  // steps 2,4,...,20 once each
    CHECK(jsonl.find("\"step\":12") == jsonl.rfind("\"step\":12"));
    const std::string csv = read_file(dir + "/m.csv");
    CHECK(count_lines(csv) == 11);
  }

  TEST_CASE("a diverging loss stops the run with an error naming the step") {
    Trainer t({.max_steps = 10, .progress = ProgressMode::kOff}, [](int64_t s) {
      return StepStats{s == 4 ? NAN : 1.0, 1, 0};
    });
    CHECK_THROWS_WITH_AS(t.run(), doctest::Contains("loss is nan at step 4"), Error);
    // The same stop as a typed error, for callers that count divergences as an outcome.
    try {
      t.run();
      FAIL("no divergence reported");
    } catch (const TrainingDiverged& e) {
      CHECK(e.step() == 4);
      CHECK(std::isnan(e.loss()));
    }
  }

  TEST_CASE("an exploding but finite loss stops the run, naming the step and the way to the op") {
    // What `--lr 1e6 --clip 0` does: the loss leaves ln(V) and grows by orders of magnitude.
    std::vector<int64_t> saved;
    Trainer t(
        {.max_steps = 50, .checkpoint_every = 1, .progress = ProgressMode::kOff},
        [](int64_t s) {
          return StepStats{s < 6 ? 3.3 : 3.3 * std::pow(10.0, double(s - 5)), 1, 0};
        },
        {}, [&](int64_t s) { saved.push_back(s); });
    std::string msg;
    int64_t diverged_at = 0;
    try {
      t.run();
    } catch (const TrainingDiverged& e) {
      msg = e.what();
      diverged_at = e.step();
    }
    INFO(msg);
    CHECK(diverged_at == 9);
    // The moving average m <- 0.9 m + 0.1 loss is 3.3, 6.3, 38.6, 365 at steps 5-8 and 3628
    // at step 9 (loss 3.3e4): over 1000 x 3.3.
    CHECK(msg.find("training diverged at step 9:") != std::string::npos);
    CHECK(msg.find("first loss 3.3") != std::string::npos);
    CHECK(msg.find("--detect-anomaly") != std::string::npos);
    CHECK(saved.back() == 8);  // the diverged step is not checkpointed
  }

  TEST_CASE("healthy noisy runs and resumed near-perfect runs are not called divergent") {
    auto run = [](std::function<double(int64_t)> loss, double factor = 1000) {
      Trainer t({.max_steps = 400, .progress = ProgressMode::kOff, .divergence_factor = factor},
                [&](int64_t s) {
                  return StepStats{loss(s), 1, 0};
                });
      return t.run().last_step;
    };
    // Early spikes 30x above the first loss, then a falling loss.
    CHECK(run([](int64_t s) { return s % 7 == 3 ? 100.0 : 3.3 / std::sqrt(double(s)); }) == 400);
    // A resumed run at loss 0.001 with batches costing several nats now and then: the 1-nat
    // floor of the reference keeps it going.
    CHECK(run([](int64_t s) { return s % 50 == 0 ? 8.0 : 0.001; }) == 400);
    // factor 0: off; only a non-finite loss stops the run.
    CHECK(run([](int64_t s) { return 1e30 * double(s); }, 0) == 400);
  }

  TEST_CASE("trainer config errors") {
    auto step = [](int64_t) { return StepStats{}; };
    CHECK_THROWS_WITH_AS(Trainer({.max_steps = 0}, step),
                         doctest::Contains("max_steps must be > 0"), Error);
    CHECK_THROWS_WITH_AS(Trainer({.target_metric = "acc"}, step),
                         doctest::Contains("needs an eval function"), Error);
    Trainer t({.max_steps = 5, .target_metric = "acc", .progress = ProgressMode::kOff}, step,
              [](int64_t) {
                return Metrics{{"loss", 1}};
              });
    CHECK_THROWS_WITH_AS(t.run(), doctest::Contains("returned no 'acc'"), Error);
    CHECK_THROWS_WITH_AS(Trainer({.max_steps = 5}, step).run(6), doctest::Contains("start step 6"),
                         Error);
  }

  TEST_CASE("plain progress lines every N steps; durations and rates format") {
    char* buf = nullptr;
    size_t len = 0;
    std::FILE* mem = ::open_memstream(&buf, &len);
    {
      Progress p(10, ProgressMode::kLines, 5, 0, mem);
      for (int64_t s = 1; s <= 10; ++s) p.update(s, {{"loss", 0.25}}, 20000);
      p.finish();
    }
    std::fclose(mem);
    const std::string out(buf, len);
    std::free(buf);
    CHECK(count_lines(out) == 2);
    CHECK(out.rfind("step 5/10 loss 0.25 20.0k tok/s elapsed", 0) == 0);
    CHECK(format_duration(65) == "1:05");
    CHECK(format_duration(3723) == "1:02:03");
    CHECK(format_duration(NAN) == "?");
    CHECK(format_rate(950) == "950 tok/s");
    CHECK(format_rate(2.5e6) == "2.5M tok/s");
  }
}

}  // namespace attn::train
