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
    // Parsed by the options system (train/options/), its messages prefixed with the command.
    CHECK_THROWS_WITH_AS(with({{"d_modle", "3"}}),
                         "train: unknown field --d_modle. Did you mean --d_model?", UsageError);
    CHECK_THROWS_WITH_AS(with({{"steps", "12x"}}),
                         "train: --steps: cannot read '12x' as int (a whole number, e.g. 32)",
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"seed", "-1"}}),
                         "train: --seed: -1 is out of range; it must be at least 0", UsageError);
    CHECK_THROWS_WITH_AS(with({{"lr", "1e309"}}), doctest::Contains("--lr: 1e309 is out of range"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"lr", "1e-400"}}), doctest::Contains("1e-400 is out of range"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"steps", "99999999999999999999"}}),
                         doctest::Contains("--steps: 99999999999999999999 is out of range"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"lr", "abc"}}), doctest::Contains("--lr: cannot read 'abc'"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"norm_first", "maybe"}}), doctest::Contains("true or false"),
                         UsageError);
    CHECK_THROWS_WITH_AS(with({{"lr", "0"}}), doctest::Contains("--lr: 0 is out of range"),
                         UsageError);
    const std::string help = train_options_help();
    for (const auto& name : train_option_names())
      CHECK(help.find("--" + name + " <") != std::string::npos);
    // The shared groups, under their headings, as `attnlab run <experiment> --help` shows them.
    for (const char* heading : {"Task:", "Model:", "Data:", "Optimizer and schedule:",
                                "Evaluation and stopping:", "Seed:", "Files and progress:"})
      CHECK(help.find(std::string("\n") + heading + "\n") != std::string::npos);
    CHECK(train_options_help(with({{"d_model", "32"}})).find("default 64, now 32") !=
          std::string::npos);
  }

  TEST_CASE("train_options and read_train_config are inverse; every option round-trips") {
    TrainConfig c = with({{"task", "khop"},
                          {"model", "gpt"},
                          {"hops", "3"},
                          {"seed", "7"},
                          {"dropout", "0.25"},
                          {"schedule", "noam"},
                          {"positional", "rope"}});
    const TrainConfig back = read_train_config(train_options(c));
    for (const auto& name : train_option_names())
      CHECK(get_train_option(back, name) == get_train_option(c, name));
    CHECK(back.seed == 7);
    CHECK(back.hops == 3);
    CHECK(back.dropout == 0.25);
  }

  TEST_CASE("the defaults are valid, and bad configurations fail naming the field") {
    CHECK_NOTHROW(validate_train_config(TrainConfig{}));
    // Each mistake fails where it is first seen: a bad value when it is set, a bad combination
    // in validate_train_config. Either way the message names the field.
    auto fails = [](std::initializer_list<std::pair<const char*, const char*>> o,
                    const std::string& msg) {
      CHECK_THROWS_WITH_AS(validate_train_config(with(o)), doctest::Contains(msg.c_str()),
                           UsageError);
    };
    fails({{"task", "reversl"}}, "--task: 'reversl' is not a choice. Did you mean reversal?");
    fails({{"model", "lstn"}}, "Did you mean lstm?");
    fails({{"model", "bert"}}, "--model bert is encoder-only");
    fails({{"task", "anagram"}, {"model", "gpt"}}, "classification task");
    fails({{"task", "charlm"}, {"model", "transformer"}}, "use --model gpt");
    fails({{"min_len", "0"}}, "--min_len: 0 is out of range; it must be at least 1");
    fails({{"min_len", "5"}, {"max_len", "3"}}, "--max_len (3) must be >= --min_len (5)");
    fails({{"eval_min_len", "0"}}, "--eval_min_len: 0 is out of range");
    fails({{"nhead", "3"}}, "--nhead 3 must divide --d_model 64");
    fails({{"n_kv_heads", "3"}}, "--n_kv_heads 3 must divide --nhead 4");
    fails({{"d_model", "0"}}, "--d_model: 0 is out of range");
    fails({{"steps", "0"}}, "--steps: 0 is out of range");
    fails({{"steps", "50"}}, "--schedule cosine needs --steps (50) > --warmup (100)");
    fails({{"schedule", "linear"}}, "--schedule: 'linear' is not a choice");
    fails({{"attention", "luong"}}, "--attention: 'luong' is not a choice");
    fails({{"dropout", "1"}},
          "--dropout: 1 is out of range; it must be at least 0 and less than 1");
    fails({{"alphabet", ""}}, "--alphabet must not be empty");
    fails({{"task", "charlm"}, {"model", "gpt"}, {"text_file", "/nonexistent/x.txt"}},
          "--text_file");
  }

  TEST_CASE("a TrainConfig built in code is checked like the command line") {
    TrainConfig c;
    c.dropout = 1.5;
    CHECK_THROWS_WITH_AS(validate_train_config(c),
                         "train: --dropout: 1.5 is out of range; it must be at least 0 and less "
                         "than 1",
                         UsageError);
    c = TrainConfig{};
    c.schedule = "cosin";
    CHECK_THROWS_WITH_AS(validate_train_config(c), doctest::Contains("Did you mean cosine?"),
                         UsageError);
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
