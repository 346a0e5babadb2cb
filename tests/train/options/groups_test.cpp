// The shared field groups (train/options/groups.h): a group declares only the members given
// defaults, reads back typed settings (neutral values for the rest), checks its cross-field
// rules, and lists under its heading in --help.
#include <doctest/doctest.h>

#include <functional>

#include "autograd/error.h"
#include "train/options/groups.h"

namespace attn::train::options {

namespace {
std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no UsageError";
}
}  // namespace

TEST_SUITE("options") {
  TEST_CASE("groups: only the members with a default are declared, under the group's heading") {
    Config c;
    c.add_int("pairs", 8, "pairs");
    add_model_fields(c, {.d_model = 32, .nhead = 4, .num_layers = 2});
    add_optimizer_fields(c, {.steps = 100, .batch_size = 16, .lr = 1e-3});
    add_seed_field(c, 3);
    CHECK(c.names() == std::vector<std::string>{"pairs", "d_model", "nhead", "num_layers", "steps",
                                                "batch_size", "lr", "seed"});
    CHECK(c.fields()[0].heading.empty());
    CHECK(c.fields()[1].heading == kModelHeading);
    CHECK(c.fields()[4].heading == kOptimizerHeading);
    CHECK(c.fields()[7].heading == kSeedHeading);
    CHECK(c.heading().empty());  // the caller's heading is restored after a group
    const std::string help = c.help_text("Fields");
    CHECK(help.find("Model:\n  --d_model <int>") != std::string::npos);
    CHECK(help.find("Optimizer and schedule:\n  --steps <int>") != std::string::npos);
    CHECK(help.find("--dim_ff") == std::string::npos);  // not declared: no flag that does nothing
    CHECK(help.find("--schedule") == std::string::npos);
  }

  TEST_CASE("groups: typed settings; undeclared members read as the neutral value") {
    Config c;
    add_model_fields(c, {.d_model = 32, .nhead = 4, .num_layers = 2, .dim_ff = 64});
    add_optimizer_fields(c, {.steps = 100, .batch_size = 16, .lr = 1e-3});
    add_data_fields(c, {.min_len = 2, .max_len = 9});
    add_eval_fields(c, {.eval_size = 50, .target = 0.9});
    add_seed_field(c);
    c.set("num-layers", "3");
    c.set("--batch_size", "8");
    c.set("seed", "12");
    const ModelSettings m = read_model(c);
    CHECK(m.d_model == 32);
    CHECK(m.nhead == 4);
    CHECK(m.num_layers == 3);
    CHECK(m.dim_ff == 64);
    CHECK(m.n_kv_heads == 0);
    CHECK(m.dropout == 0);
    CHECK(m.hidden == 0);
    const OptimizerSettings o = read_optimizer(c);
    CHECK(o.steps == 100);
    CHECK(o.batch_size == 8);
    CHECK(o.lr == doctest::Approx(1e-3));
    CHECK(o.schedule == "constant");  // no schedule declared: a constant rate, as before groups
    CHECK(o.warmup == 0);
    CHECK(o.weight_decay == 0);
    CHECK(o.clip == 0);
    const DataSettings d = read_data(c);
    CHECK(d.min_len == 2);
    CHECK(d.max_len == 9);
    CHECK(d.eval_max_len == 0);
    const EvalSettings e = read_eval(c);
    CHECK(e.eval_size == 50);
    CHECK(e.target == doctest::Approx(0.9));
    CHECK(e.eval_every == 0);
    CHECK(read_seed(c) == 12);
    // A training loop needs steps, batch_size and lr: asking without them is a programming error.
    Config bare;
    add_optimizer_fields(bare, {.lr = 1e-3});
    CHECK_THROWS_WITH_AS(read_optimizer(bare), doctest::Contains("no 'steps'"), Error);
  }

  TEST_CASE("groups: every member has its range; bad values name the flag") {
    Config c;
    add_model_fields(c, {.d_model = 32,
                         .nhead = 4,
                         .n_kv_heads = 0,
                         .num_layers = 2,
                         .dim_ff = 64,
                         .dropout = 0.1,
                         .hidden = 16});
    add_optimizer_fields(c, {.steps = 100,
                             .batch_size = 16,
                             .lr = 1e-3,
                             .schedule = "cosine",
                             .warmup = 10,
                             .weight_decay = 0,
                             .clip = 1});
    add_data_fields(c, {.min_len = 1,
                        .max_len = 9,
                        .eval_min_len = 1,
                        .eval_max_len = 9,
                        .seq_len = 64,
                        .block_len = 32});
    add_eval_fields(c, {.eval_size = 50, .eval_every = 10, .target = 0.9, .max_seconds = 0});
    add_seed_field(c);
    for (const char* name :
         {"d_model", "nhead", "num_layers", "dim_ff", "hidden", "steps", "batch_size", "min_len",
          "max_len", "eval_min_len", "eval_max_len", "seq_len", "block_len", "eval_size"})
      CHECK(usage_message([&] { c.set(name, "0"); }).find(std::string("--") + name) == 0);
    for (const char* name : {"n_kv_heads", "warmup", "eval_every", "seed"})
      CHECK(usage_message([&] { c.set(name, "-1"); }).find("at least 0") != std::string::npos);
    for (const char* name : {"weight_decay", "clip", "max_seconds"})
      CHECK(usage_message([&] { c.set(name, "-0.5"); }).find("at least 0") != std::string::npos);
    CHECK(usage_message([&] { c.set("lr", "0"); }).find("greater than 0") != std::string::npos);
    CHECK(usage_message([&] { c.set("dropout", "1"); }).find("less than 1") != std::string::npos);
    CHECK(usage_message([&] { c.set("target", "1.5"); }).find("between 0 and 1") !=
          std::string::npos);
    CHECK(usage_message([&] { c.set("schedule", "cosin"); }) ==
          "--schedule: 'cosin' is not a choice. Did you mean cosine?");
    CHECK(read_model(c).dropout == doctest::Approx(0.1));  // the failed attempts changed nothing
  }

  TEST_CASE("groups: cross-field rules of the declared members") {
    Config c;
    add_model_fields(c, {.d_model = 64, .nhead = 4, .n_kv_heads = 0});
    add_optimizer_fields(
        c, {.steps = 100, .batch_size = 16, .lr = 1e-3, .schedule = "cosine", .warmup = 10});
    add_data_fields(c, {.min_len = 1, .max_len = 9, .eval_min_len = 4, .eval_max_len = 9});
    CHECK_NOTHROW(check_model(c));
    CHECK_NOTHROW(check_optimizer(c));
    CHECK_NOTHROW(check_data(c));
    c.set("nhead", "3");
    CHECK(usage_message([&] { check_model(c); }).find("--nhead 3 must divide --d_model 64") == 0);
    c.set("nhead", "4");
    c.set("n_kv_heads", "3");
    CHECK(usage_message([&] { check_model(c); }).find("--n_kv_heads 3 must divide --nhead 4") == 0);
    c.set("n_kv_heads", "2");
    CHECK_NOTHROW(check_model(c));
    c.set("warmup", "100");
    CHECK(usage_message([&] { check_optimizer(c); }) ==
          "--schedule cosine needs --steps (100) > --warmup (100)");
    c.set("schedule", "noam");
    c.set("warmup", "0");
    CHECK(usage_message([&] { check_optimizer(c); }).find("noam needs --warmup > 0") !=
          std::string::npos);
    c.set("eval_max_len", "3");
    CHECK(usage_message([&] { check_data(c); }) ==
          "--eval_max_len (3) must be >= --eval_min_len (4)");
    // A group without the members a rule needs has nothing to check.
    Config small;
    add_model_fields(small, {.d_model = 10});
    CHECK_NOTHROW(check_model(small));
  }
}

}  // namespace attn::train::options
