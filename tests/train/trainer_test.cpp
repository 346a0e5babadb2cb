// Trainer: early stop, metric files, divergence, resume of the logs; progress formatting.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
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
