// The train command's configuration: parsing, and validation before any work starts.
#include <doctest/doctest.h>

#include "autograd/error.h"
#include "train/run/train_config.h"

namespace attn::train {

namespace {
TrainConfig with(std::initializer_list<std::pair<const char*, const char*>> options) {
  TrainConfig c;
  for (const auto& [k, v] : options) set_train_option(c, k, v);
  return c;
}
}  // namespace

TEST_SUITE("train") {
  TEST_CASE("options parse from text; '-' and '_' are the same; errors name the option") {
    TrainConfig c =
        with({{"d-model", "32"}, {"--lr", "0.003"}, {"norm_first", "false"}, {"task", "sort"}});
    CHECK(c.d_model == 32);
    CHECK(c.lr == doctest::Approx(0.003));
    CHECK_FALSE(c.norm_first);
    CHECK(c.task == "sort");
    CHECK(get_train_option(c, "d_model") == "32");
    CHECK_THROWS_WITH_AS(with({{"d_modle", "3"}}),
                         "train: unknown option '--d_modle' (did you mean --d_model?)", UsageError);
    CHECK_THROWS_WITH_AS(with({{"steps", "12x"}}),
                         "train: --steps expects a whole number, got '12x'", UsageError);
    CHECK_THROWS_WITH_AS(with({{"seed", "-1"}}),
                         "train: --seed must be >= 0 (seeds are unsigned), got '-1'", UsageError);
    CHECK_THROWS_WITH_AS(with({{"lr", "1e309"}}), doctest::Contains("--lr is out of range"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"lr", "1e-400"}}), doctest::Contains("too close to zero"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"steps", "99999999999999999999"}}),
                         doctest::Contains("--steps is out of range"), UsageError);
    CHECK_THROWS_WITH_AS(with({{"lr", "abc"}}), doctest::Contains("--lr expects a number"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"norm_first", "maybe"}}),
                         doctest::Contains("expects true or false"), UsageError);
    const std::string help = train_options_help();
    for (const auto& name : train_option_names())
      CHECK(help.find("--" + name) != std::string::npos);
  }

  TEST_CASE("the defaults are valid, and bad configurations fail naming the field") {
    CHECK_NOTHROW(validate_train_config(TrainConfig{}));
    auto fails = [](std::initializer_list<std::pair<const char*, const char*>> o,
                    const std::string& msg) {
      const TrainConfig c = with(o);
      CHECK_THROWS_WITH_AS(validate_train_config(c), doctest::Contains(msg.c_str()), UsageError);
    };
    fails({{"task", "reversl"}}, "unknown task 'reversl'");
    fails({{"task", "reversl"}}, "did you mean 'reversal'?");
    fails({{"model", "lstn"}}, "did you mean 'lstm'?");
    fails({{"model", "bert"}}, "--model bert is encoder-only");
    fails({{"task", "anagram"}, {"model", "gpt"}}, "classification task");
    fails({{"task", "charlm"}, {"model", "transformer"}}, "use --model gpt");
    fails({{"min_len", "0"}}, "--min_len must be > 0, got 0");
    fails({{"max_len", "-3"}}, "--max_len (-3) must be >= --min_len (1)");
    fails({{"eval_min_len", "0"}}, "--eval_min_len must be > 0");
    fails({{"nhead", "3"}}, "--nhead (3) must divide --d_model (64)");
    fails({{"d_model", "0"}}, "--d_model must be > 0");
    fails({{"steps", "0"}}, "--steps must be > 0");
    fails({{"schedule", "linear"}}, "unknown schedule 'linear'");
    fails({{"attention", "luong"}}, "unknown attention 'luong'");
    fails({{"dropout", "1"}}, "--dropout must be in [0, 1)");
    fails({{"alphabet", ""}}, "--alphabet must not be empty");
    fails({{"task", "charlm"}, {"model", "gpt"}, {"text_file", "/nonexistent/x.txt"}},
          "--text_file");
  }

  TEST_CASE("a configuration that cannot fit in memory is refused up front") {
    TrainConfig c = with({{"batch_size", "100000"},
                          {"d_model", "4096"},
                          {"dim_ff", "16384"},
                          {"max_len", "4000"},
                          {"eval_max_len", "4000"},
                          {"num_layers", "24"}});
    CHECK(estimate_train_memory(c) > available_memory_bytes());
    CHECK_THROWS_WITH_AS(validate_train_config(c), doctest::Contains("GB available"), UsageError);
    CHECK(estimate_train_memory(TrainConfig{}) < int64_t{1} << 30);  // the defaults are small
  }
}

}  // namespace attn::train
