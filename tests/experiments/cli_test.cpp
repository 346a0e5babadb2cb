// The run command's parsing, the experiment registry, and running experiments in-process with
// their key results checked against the documents.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "autograd/error.h"
#include "experiments/cli/commands.h"
#include "experiments/registry.h"
#include "experiments/run_context.h"

namespace attn::experiments {

namespace {

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no UsageError";
}

// Runs an experiment with no run folder and no terminal output; returns its results.
RunContext run_quietly(const std::string& name,
                       std::vector<std::pair<std::string, std::string>> overrides = {}) {
  RunRequest r;
  r.name = name;
  r.quick = true;
  r.overrides = std::move(overrides);
  const Experiment& e = find_experiment(name);
  RunOptions o;
  o.write = false;
  o.echo = false;
  RunContext ctx(e, resolve_config(e, r), o);
  e.run(ctx.config(), ctx);
  return ctx;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("run arguments: fields, options and bare booleans") {
    RunRequest r = parse_run_args({"anagrams", "--d-model", "32", "--atol=1e-4", "--quick",
                                   "--flag", "--out", "/tmp/x", "--threads", "1", "--seed", "3"});
    CHECK(r.name == "anagrams");
    CHECK(r.quick);
    CHECK(r.out == "/tmp/x");
    CHECK(r.threads == 1);
    REQUIRE(r.overrides.size() == 4);
    CHECK(r.overrides[0] == std::pair<std::string, std::string>{"d-model", "32"});
    CHECK(r.overrides[1] == std::pair<std::string, std::string>{"atol", "1e-4"});
    CHECK(r.overrides[2] == std::pair<std::string, std::string>{"flag", "true"});
    CHECK(r.overrides[3] == std::pair<std::string, std::string>{"seed", "3"});
    CHECK(parse_run_args({"anagrams", "--x", "-1"}).overrides[0].second == "-1");
    CHECK(parse_run_args({"anagrams", "--help"}).help);
    CHECK(usage_message([] { parse_run_args({}); }).find("which experiment") != std::string::npos);
    CHECK(usage_message([] {
            parse_run_args({"a", "b"});
          }).find("unexpected argument 'b'") != std::string::npos);
    CHECK(usage_message([] {
            parse_run_args({"a", "--out"});
          }).find("--out needs a value") != std::string::npos);
    CHECK(usage_message([] {
            parse_run_args({"a", "--threads", "two"});
          }).find("--threads") != std::string::npos);
  }

  TEST_CASE("registry: unique names, a seed field, help, closest names for typos") {
    std::set<std::string> names;
    for (const auto& e : all_experiments()) {
      CHECK(names.insert(e.name).second);
      CHECK(e.config.has("seed"));
      CHECK_FALSE(e.source.empty());
      CHECK_FALSE(e.purpose.empty());
      CHECK_FALSE(e.typical_time.empty());
      CHECK(run_help(e, e.config).find("--seed <int>") != std::string::npos);
      for (const auto& kv : e.quick)  // not a binding: CHECK_MESSAGE is a lambda (clang 14)
        CHECK_MESSAGE(e.config.has(kv.first), e.name << " quick " << kv.first);
    }
    CHECK(list_text().find("worked-example") != std::string::npos);
    // The shared groups list under their headings, after the experiment's own fields.
    const Experiment& mha = find_experiment("mha-heads");
    const std::string help = run_help(mha, mha.config);
    CHECK(help.find("Fields (") < help.find("--columns <int>"));
    CHECK(help.find("--columns <int>") < help.find("\nModel:\n  --d_model <int>"));
    CHECK(help.find("\nModel:\n  --d_model <int>") < help.find("\nSeed:\n  --seed <int>"));
    CHECK(help.find("\nRun options:\n  --threads N") != std::string::npos);
    CHECK(usage_message([] { find_experiment("anagram"); }).find("Did you mean anagrams?") !=
          std::string::npos);
    RunRequest r;
    r.name = "anagrams";
    r.overrides = {{"d_modle", "4"}};
    CHECK(usage_message([&] {
            resolve_config(find_experiment("anagrams"), r);
          }).find("run anagrams: unknown field --d_modle. Did you mean --d_model?") !=
          std::string::npos);
  }

  TEST_CASE("quick overrides come first, the user's own overrides win") {
    RunRequest r;
    r.name = "identity-lookup";
    r.quick = true;
    r.overrides = {{"trials", "7"}};
    const Config c = resolve_config(find_experiment("identity-lookup"), r);
    CHECK(c.get_ints("dims") == std::vector<int64_t>{4, 16, 64});  // from quick
    CHECK(c.get_int("trials") == 7);                               // the user's
  }

  TEST_CASE("run context: results are named once; tensors become nested arrays") {
    RunOptions o;
    o.write = false;
    o.echo = false;
    const Experiment& e = find_experiment("worked-example");
    RunContext ctx(e, e.config, o);
    ctx.result("x", 1.5);
    CHECK_THROWS_AS(ctx.result("x", 2), Error);
    ctx.result("m", Tensor::from_vector({2, 2}, {1, 2, 3, 4}));
    CHECK(ctx.results()["m"].dump() == "[[1.0,2.0],[3.0,4.0]]");
    CHECK(ctx.dir().empty());
  }

  TEST_CASE("worked-example: every printed matrix matches the document to 3 decimals") {
    RunContext ctx = run_quietly("worked-example");
    REQUIRE(ctx.comparisons().size() == 2);
    CHECK(ctx.comparisons()[0].num_differ() == 0);  // the printed output
    CHECK(ctx.comparisons()[1].num_differ() == 2);  // the prose's softmax rows 0 and 2
    CHECK(ctx.results()["A"][0][1].get<double>() == doctest::Approx(0.19782).epsilon(1e-4));
    CHECK(ctx.results()["hand_check_row0"][0].get<double>() ==
          doctest::Approx(std::exp(1 / std::sqrt(2.0)) / (2 * std::exp(1 / std::sqrt(2.0)) + 1)));
  }

  TEST_CASE("anagrams: True, True without positions; False with either kind of position") {
    RunContext ctx = run_quietly("anagrams");
    const auto& r = ctx.results();
    CHECK(r["s1_vs_s2_none"] == true);
    CHECK(r["s1_vs_s3_none"] == true);
    for (const char* p : {"sinusoidal", "learned"}) {
      CHECK(r[std::string("s1_vs_s2_") + p] == false);
      CHECK(r[std::string("s1_vs_s3_") + p] == false);
    }
    CHECK(r["equivariance_error_none"].get<double>() < 1e-5);
    // 002's own claims all hold; 001 and 003 call the layer permutation-invariant, and each of
    // their comparisons shows it is not (the invariance error and the word: 2 DIFFERS each).
    for (const auto& c : ctx.comparisons())
      CHECK_MESSAGE(c.num_differ() == (c.title().rfind("002", 0) == 0 ? 0 : 2), c.title());
    CHECK(ctx.num_differ() == 4);
  }

  TEST_CASE("causal-mask: zero weights above the diagonal and zero gradient from the future") {
    // The mask's rows only: the generation models of the experiment's second part train for
    // one step (this test took 100 s of the unit suite on a CPU without FMA, where the portable
    // kernels' std::fma is a libm routine; that part has its own checks in the CLI tests).
    RunContext ctx = run_quietly("causal-mask", {{"gen_steps", "1"}, {"gen_eval", "1"}});
    CHECK(ctx.results()["max_weight_above_diagonal"] == 0.0);
    CHECK(ctx.results()["max_gradient_to_future"] == 0.0);
    CHECK(ctx.results()["future_entries_nonzero"] == 0);
    CHECK(ctx.results()["min_gradient_to_past"].get<double>() > 0);
    CHECK(ctx.results()["min_gradient_without_mask"].get<double>() > 0);
  }
}

}  // namespace attn::experiments
