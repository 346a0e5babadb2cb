// Claims that could not fail, and the run context's `not judged`: each case below fails on the
// code before issue 29 (a row that said ok by construction, a tolerance wider than the gap it
// was meant to resolve, an "ours" computed from the document's own constants).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autograd/functional.h"
#include "experiments/cli/commands.h"
#include "experiments/registry.h"
#include "experiments/run_context.h"

namespace attn::experiments {

namespace {

// Runs an experiment in-process with its --quick settings plus `overrides`, without a run
// folder or terminal output, and with RunOptions::quick off: the rows are judged as in a full
// run, so a row that cannot fail shows here.
RunContext run_judged(const std::string& name,
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

// The row whose name starts with `prefix` (REQUIREs exactly one).
const Comparison& row(const RunContext& ctx, const std::string& prefix) {
  const Comparison* found = nullptr;
  int n = 0;
  for (const auto& c : ctx.comparisons())
    for (const auto& e : c.entries())
      if (e.name.rfind(prefix, 0) == 0) found = &e, ++n;
  INFO("rows starting with: " << prefix);
  REQUIRE(n == 1);
  return *found;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("run context: a --quick run judges no row, and prints no 'DIFFERS is expected'") {
    const Experiment& e = find_experiment("worked-example");
    RunOptions o;
    o.write = false;
    o.echo = false;
    o.quick = true;
    RunContext ctx(e, e.config, o);
    DocumentComparison cmp;
    cmp.add("agrees", 1.0, 1.0 + 1e-6, 1e-3);
    cmp.add("differs", 1.0, 2.0, 1e-3, "far off");
    cmp.add_exact("words", "yes", "yes").needs_samples(3, 30);
    ctx.compare(cmp);
    for (const auto& r : ctx.comparisons()[0].entries()) {
      CHECK(r.status() == ClaimStatus::kNotJudged);
      CHECK(r.not_judged_reason.rfind("--quick run", 0) == 0);
    }
    CHECK(ctx.comparisons()[0].entries()[2].not_judged_reason ==
          "--quick run; too few samples (n=3 < 30)");
    CHECK(ctx.num_differ() == 0);
    CHECK(ctx.num_not_judged() == 3);
  }

  TEST_CASE("two-relation: the tolerance tells the document's two losses apart") {
    const RunContext ctx = run_judged("two-relation");
    const Comparison& one = row(ctx, "1-head loss at the end");
    const Comparison& two = row(ctx, "2-head loss at the end");
    const double gap = std::fabs(one.document[0] - two.document[0]);  // 0.3505 - 0.3196
    CHECK(gap == doctest::Approx(0.0309));
    // Within half the gap ours is nearer its own value than the other: each row can tell them
    // apart (0.05, wider than the gap itself, let either row accept either value).
    CHECK(one.tolerance <= gap / 2);
    CHECK(two.tolerance <= gap / 2);
    CHECK(one.tolerance > 0);
  }

  TEST_CASE("qkv-identity: the worked rows compare the print with our softmax, not with doubles") {
    // The worked rows only: the sweeps and the tied model's training kept to a token size.
    const RunContext ctx =
        run_judged("qkv-identity", {{"trials", "2"}, {"dims", "2"}, {"tied_steps", "1"}});
    const Comparison& an = row(ctx, "'an' row (I ate an apple)");
    // Ours is what the softmax op makes of scores log w, as float32.
    std::vector<real> scores;
    for (double w : an.document) scores.push_back(static_cast<real>(std::log(w)));
    const Tensor p = softmax(Var::constant(Tensor::from_vector(scores))).value();
    REQUIRE(an.ours.size() == 4);
    for (size_t i = 0; i < 4; ++i) CHECK(an.ours[i] == static_cast<double>(p[i]));
    // Half a unit of the printed decimal: 0.2 0.1 0.5 0.3 is a softmax row rounded to 1 decimal.
    CHECK(an.tolerance == 0.05);
    CHECK(an.status() == ClaimStatus::kOk);
    // Every numeric "ours" of the worked weights is a float32 value the op produced, none an
    // arithmetic on the document's constants in double (0.7 + 0.1 + 0.1 + 0.1, h / 11, ...).
    for (const auto& c : ctx.comparisons())
      if (c.title().rfind("004 §1.3-1.4", 0) == 0)
        for (const auto& e : c.entries())
          for (double x : e.ours) {
            INFO(e.name);
            CHECK(static_cast<double>(static_cast<float>(x)) == x);
          }
  }

  TEST_CASE("ablate-block: when the intact block diverges, no part's removal is judged") {
    // A learning rate that blows every model up: each variant "fails to train", so the rows
    // that read a drop from the intact block would all say the removal changed nothing.
    const RunContext ctx =
        run_judged("ablate-block", {{"lr", "1e6"}, {"steps", "60"}, {"warmup", "5"}});
    int rows = 0;
    for (const auto& c : ctx.comparisons())
      for (const auto& e : c.entries()) {
        INFO(e.name);
        CHECK(e.status() == ClaimStatus::kNotJudged);
        CHECK(e.not_judged_reason.find("the intact block diverged on reversal") !=
              std::string::npos);
        ++rows;
      }
    CHECK(rows >= 4);
  }

  TEST_CASE("gpt-bert-encdec: an untrained encoder-decoder is not judged, and never passes") {
    // Two steps each: no model trains. The claim keeps its threshold (0.90; --quick used to set
    // it to 0, which any model passes).
    const RunContext ctx = run_judged("gpt-bert-encdec", {{"gpt_steps", "2"},
                                                          {"bert_steps", "2"},
                                                          {"reversal_steps", "2"},
                                                          {"reversal_eval_every", "2"},
                                                          {"warmup", "0"},
                                                          {"eval_size", "20"},
                                                          {"mask_passes", "2"}});
    const Comparison& c = row(ctx, "the encoder-decoder learns a sequence-to-sequence task");
    CHECK(c.name.find("exact match >= 0.90") != std::string::npos);
    CHECK(c.status() == ClaimStatus::kNotJudged);
    CHECK(c.not_judged_reason.rfind("model did not train (final token accuracy", 0) == 0);
  }

  TEST_CASE(
      "length-extrapolation: claims about untrained models are not judged; learned is "
      "measured past training") {
    const RunContext ctx = run_judged("length-extrapolation", {{"variants",
                                                                "learned,sinusoidal,"
                                                                "rope,alibi"},
                                                               {"steps", "2"},
                                                               {"warmup", "1"},
                                                               {"eval_lengths", "32,64"},
                                                               {"sentences", "200"},
                                                               {"eval_chars", "512"}});
    // Two steps train nothing: no claim may say ok (the sinusoid row compared raw accuracies,
    // and the learned row was "yes" by construction).
    for (const auto& c : ctx.comparisons())
      for (const auto& e : c.entries()) {
        INFO(e.name);
        CHECK(e.status() == ClaimStatus::kNotJudged);
        CHECK(e.not_judged_reason.find("model did not train") != std::string::npos);
      }
    CHECK(ctx.comparisons().at(0).entries().size() == 4);
    // The learned model reads 64 characters (its table repeats the last trained row).
    for (const auto& v : ctx.results().at("variants"))
      if (v.at("variant") == "learned") {
        const auto& past = v.at("points").at(1);
        CHECK(past.at("length") == 64);
        CHECK(past.at("accuracy").is_number());
      }
  }
}

}  // namespace attn::experiments
