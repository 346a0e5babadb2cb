// The trainer's safety wherever a model trains: DivergenceCheck (the loop's check, also for a
// loop written by hand) names the variant and the step; under anomaly detection the error of
// the op that first made a NaN/Inf gets the step (Trainer) and the variant (Fit,
// rethrow_naming_variant) in front (with detection on, any plain attn::Error from a step: the
// two cannot be told apart); other errors, and every error with detection off, pass unchanged.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "nn/linear.h"
#include "tests/error_message.h"
#include "train/divergence.h"
#include "train/fit.h"

namespace attn::train {

namespace {

// A Fit of a 4 -> 3 linear layer named "linear" whose loss function is `loss(call number)`.
template <class Loss>
std::string fit_error(Loss loss) {
  Generator gen(7);
  nn::Linear model(4, 3, true, gen);
  const Tensor x = Tensor::randn({8, 4}, gen);
  int64_t calls = 0;
  FitSettings s{.name = "linear", .steps = 5, .optimizer = {.lr = 1e-3}};
  const std::string msg = testing::error_of([&] {
    fit(model, s,
        [&](const BatchPart&) { return StepLoss{loss(++calls, model.forward(Var::constant(x)))}; });
  });
  tape().clear();  // the records of the step that threw
  return msg;
}

}  // namespace

TEST_SUITE("train") {
  TEST_CASE("DivergenceCheck names the variant and the step, and its factor 0 ignores size") {
    DivergenceCheck named("mlp");
    named.check(1, 0.7);
    const std::string msg = testing::error_of([&] { named.check(2, std::nan("")); });
    CHECK(msg.rfind("variant 'mlp': training diverged: the loss is nan at step 2;", 0) == 0);
    DivergenceCheck exploding("", 1000);
    exploding.check(1, 1.0);
    int64_t step = 0;
    try {
      for (int64_t s = 2; s < 10; ++s) exploding.check(s, 1e6);  // average 1 -> 1e5 at step 2
    } catch (const TrainingDiverged& e) {
      step = e.step();
      CHECK(std::string(e.what()).rfind("training diverged at step 2:", 0) == 0);
    }
    CHECK(step == 2);
    DivergenceCheck size_ignored("", 0);
    for (int64_t s = 1; s < 5; ++s) size_ignored.check(s, 1e30);
    CHECK_THROWS_AS(size_ignored.check(5, std::numeric_limits<double>::infinity()),
                    TrainingDiverged);
  }

  TEST_CASE("anomaly detection's error inside fit names the variant, the step and the op") {
    auto log_of_zero_at_3 = [](int64_t call, const Var& logits) {
      return call == 3 ? mean(log(logits - logits)) : mean(logits * logits);
    };
    {
      AnomalyMode on;
      const std::string msg = fit_error(log_of_zero_at_3);
      INFO(msg);
      CHECK(msg.rfind("variant 'linear': step 3: log: non-finite output -inf", 0) == 0);
    }
    // Off, the -inf loss is the divergence check's to report, naming variant and step.
    const std::string msg = fit_error(log_of_zero_at_3);
    CHECK(msg.rfind("variant 'linear': training diverged: the loss is -inf at step 3;", 0) == 0);
  }

  TEST_CASE("detection off, errors pass through fit unchanged; on, a plain Error is placed") {
    auto data_ran_out = [](int64_t call, const Var& logits) {
      if (call == 2) throw Error("the data ran out");
      return mean(logits * logits);
    };
    auto usage = [](int64_t call, const Var& logits) {
      if (call == 2) throw UsageError("--lr must be > 0");
      return mean(logits * logits);
    };
    CHECK(fit_error(data_ran_out) == "the data ran out");
    CHECK(fit_error(usage) == "--lr must be > 0");
    AnomalyMode on;  // anomaly detection throws a plain attn::Error: each such one gets the place
    CHECK(fit_error(data_ran_out) == "variant 'linear': step 2: the data ran out");
    CHECK(fit_error(usage) == "--lr must be > 0");  // a UsageError (exit 2) is never changed
  }

  TEST_CASE(
      "rethrow_naming_variant keeps a divergence's step and loss, and says when detection saw no "
      "NaN") {
    auto rethrown = [](double loss) {
      try {
        try {
          throw TrainingDiverged("training diverged at step 4: ...", 4, loss);
        } catch (const Error&) {
          rethrow_naming_variant("train-gpt");
        }
      } catch (const TrainingDiverged& e) {
        CHECK(e.step() == 4);
        return std::string(e.what());
      }
      return std::string();
    };
    CHECK(rethrown(1e9) == "variant 'train-gpt': training diverged at step 4: ...");
    AnomalyMode on;
    CHECK(rethrown(1e9).find("(anomaly detection was on: no op produced a NaN/Inf") !=
          std::string::npos);
    CHECK(rethrown(std::nan("")).find("anomaly detection was on") == std::string::npos);
  }
}

}  // namespace attn::train
