// Optimizers (hand-computed steps, state round trip and validation), clipping, schedules.
// Bit-for-bit agreement with torch.optim is checked by tests/parity/check_optim.py.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "train/optim/adam.h"
#include "train/optim/clip.h"
#include "train/optim/sgd.h"
#include "train/schedule.h"

namespace attn::train {

namespace {
Var param(std::vector<real> v) {
  return Var::parameter(Tensor::from_vector(v));
}
void set_grad(Var& p, std::vector<real> g) {
  p.zero_grad();
  p.node().accumulate_grad(Tensor::from_vector(g));
}
}  // namespace

TEST_SUITE("train") {
  TEST_CASE("SGD with momentum and weight decay: two steps by hand") {
    Var p = param({1, -2});
    Sgd opt({p}, {.lr = 0.1, .momentum = 0.5, .weight_decay = 0.1});
    set_grad(p, {1, 1});
    opt.step();  // g = 1 + 0.1 p = (1.1, 0.8); buf = g; p -= 0.1 g
    CHECK(p.value()[0] == doctest::Approx(1 - 0.11));
    CHECK(p.value()[1] == doctest::Approx(-2 - 0.08));
    opt.step();  // g = 1 + 0.1 p; buf = 0.5 buf + g
    const double g0 = 1 + 0.1 * 0.89, buf0 = 0.5 * 1.1 + g0;
    CHECK(p.value()[0] == doctest::Approx(0.89 - 0.1 * buf0));
    CHECK(opt.steps_taken() == 2);
  }

  TEST_CASE("Adam's first step moves each weight by lr (bias correction), AdamW also decays") {
    Var a = param({1, -3}), b = param({1, -3});
    Adam adam({a}, {.lr = 0.01});
    AdamW adamw({b}, {.lr = 0.01, .weight_decay = 0.5});
    set_grad(a, {4, -0.001f});
    set_grad(b, {4, -0.001f});
    adam.step();
    adamw.step();
    // m_hat = g, v_hat = g^2 => step = lr * g / (|g| + eps) = lr * sign(g) (up to eps)
    CHECK(a.value()[0] == doctest::Approx(1 - 0.01));
    CHECK(a.value()[1] == doctest::Approx(-3 + 0.01).epsilon(1e-5));
    CHECK(b.value()[0] == doctest::Approx(1 * (1 - 0.01 * 0.5) - 0.01));
  }

  TEST_CASE("a parameter without a gradient is skipped and gets no state") {
    Var a = param({1}), b = param({2});
    Adam opt({a, b}, {});
    set_grad(a, {1});
    opt.step();
    CHECK(b.value()[0] == 2);
    TensorMap s = opt.state_dict();
    CHECK(s.count("0.exp_avg"));
    CHECK_FALSE(s.count("1.exp_avg"));
    CHECK(s.at("steps").item() == 1);
  }

  TEST_CASE("optimizer state round-trips and continues identically") {
    Var a = param({0.5, -1.5, 2}), b = param({0.5, -1.5, 2});
    Adam first({a}, {.lr = 0.1});
    for (int i = 0; i < 3; ++i) {
      set_grad(a, {0.3f * static_cast<real>(i + 1), -1, 2});
      first.step();
    }
    b.value().copy_from(a.value());
    Adam second({b}, {.lr = 0.1});
    second.load_state_dict(first.state_dict());
    CHECK(second.steps_taken() == 3);
    set_grad(a, {1, 1, 1});
    set_grad(b, {1, 1, 1});
    first.step();
    second.step();
    for (int i = 0; i < 3; ++i) CHECK(a.value()[i] == b.value()[i]);
  }

  TEST_CASE("loading a mismatched optimizer state lists every problem and changes nothing") {
    Var a = param({1, 2});
    Adam opt({a}, {});
    set_grad(a, {1, 1});
    opt.step();
    TensorMap bad = opt.state_dict();
    bad["0.exp_avg"] = Tensor::zeros({3});
    bad["7.exp_avg"] = Tensor::zeros({2});
    bad["0.momentum_buffer"] = Tensor::zeros({2});
    bad.erase("steps");
    const TensorMap before = opt.state_dict();
    CHECK_THROWS_WITH_AS(opt.load_state_dict(bad), doctest::Contains("4 problems"), Error);
    try {
      opt.load_state_dict(bad);
    } catch (const Error& e) {
      const std::string msg = e.what();
      CHECK(msg.find("'0.exp_avg' has shape (3), the parameter needs (2)") != std::string::npos);
      CHECK(msg.find("unexpected '7.exp_avg'") != std::string::npos);
      CHECK(msg.find("unexpected '0.momentum_buffer'") != std::string::npos);
      CHECK(msg.find("missing 'steps'") != std::string::npos);
    }
    CHECK(opt.state_dict().at("0.exp_avg").to_vector() == before.at("0.exp_avg").to_vector());
    TensorMap partial = before;
    partial.erase("0.exp_avg_sq");
    CHECK_THROWS_WITH_AS(opt.load_state_dict(partial), doctest::Contains("2 of the 3 buffers"),
                         Error);
  }

  TEST_CASE("optimizer hyperparameters are validated") {
    Var a = param({1});
    CHECK_THROWS_WITH_AS(Sgd({a}, {.lr = -1}), "SGD: lr must be >= 0, got -1", Error);
    CHECK_THROWS_WITH_AS(Sgd({a}, {.nesterov = true}), doctest::Contains("nesterov needs"), Error);
    CHECK_THROWS_WITH_AS(Adam({a}, {.beta1 = 1.0}), "Adam: beta1 must be in [0, 1), got 1", Error);
    CHECK_THROWS_WITH_AS(AdamW({a}, {.eps = -1}), "AdamW: eps must be >= 0, got -1", Error);
    CHECK_THROWS_WITH_AS(Adam({}, {}), doctest::Contains("no parameters"), Error);
    CHECK_THROWS_WITH_AS(Adam({Var::constant(Tensor::ones({1}))}, {}),
                         doctest::Contains("does not require a gradient"), Error);
  }

  TEST_CASE("clip_grad_norm: returns the global norm, scales only above max_norm") {
    Var a = param({0, 0}), b = param({0});
    set_grad(a, {3, 0});
    set_grad(b, {4});
    CHECK(clip_grad_norm({a, b}, 10.0) == doctest::Approx(5));
    CHECK(a.grad()[0] == doctest::Approx(3));  // factor min(1, 10/5) = 1
    CHECK(clip_grad_norm({a, b}, 1.0) == doctest::Approx(5));
    CHECK(a.grad()[0] == doctest::Approx(3.0 / (5 + 1e-6)));
    CHECK(b.grad()[0] == doctest::Approx(4.0 / (5 + 1e-6)));
    CHECK(grad_norm({a, b}) == doctest::Approx(1).epsilon(1e-5));
    Var none = param({1});
    CHECK(clip_grad_norm({none}, 1.0) == 0);
    set_grad(a, {INFINITY, 0});
    CHECK_THROWS_WITH_AS(clip_grad_norm({a}, 1.0, true), doctest::Contains("is inf"), Error);
    CHECK_THROWS_WITH_AS(clip_grad_norm({a}, 0.0), doctest::Contains("max_norm must be > 0"),
                         Error);
  }

  TEST_CASE("schedules: values at given steps") {
    auto constant = make_schedule({.kind = "constant", .lr = 0.3});
    CHECK(constant->lr(1) == 0.3);
    CHECK(constant->lr(1000) == 0.3);
    auto warm = make_schedule({.kind = "warmup", .lr = 0.1, .warmup = 10});
    CHECK(warm->lr(1) == doctest::Approx(0.01));
    CHECK(warm->lr(5) == doctest::Approx(0.05));
    CHECK(warm->lr(10) == doctest::Approx(0.1));
    CHECK(warm->lr(500) == doctest::Approx(0.1));
    // Noam with d_model 512, warmup 4000: peak 512^-0.5 * 4000^-0.5 at step 4000.
    auto noam = make_schedule({.kind = "noam", .warmup = 4000, .d_model = 512});
    CHECK(noam->lr(4000) == doctest::Approx(1.0 / std::sqrt(512.0 * 4000.0)));
    CHECK(noam->lr(1) == doctest::Approx(std::pow(512.0, -0.5) * std::pow(4000.0, -1.5)));
    CHECK(noam->lr(16000) == doctest::Approx(std::pow(512.0, -0.5) / std::sqrt(16000.0)));
    CHECK(noam->lr(2000) < noam->lr(4000));
    CHECK(noam->lr(8000) < noam->lr(4000));
    auto cosine =
        make_schedule({.kind = "cosine", .lr = 1.0, .warmup = 10, .total = 110, .min_lr = 0.1});
    CHECK(cosine->lr(5) == doctest::Approx(0.5));
    CHECK(cosine->lr(10) == doctest::Approx(1.0));
    CHECK(cosine->lr(60) == doctest::Approx(0.55));  // halfway: min + (max - min) / 2
    CHECK(cosine->lr(110) == doctest::Approx(0.1));
    CHECK(cosine->lr(500) == doctest::Approx(0.1));
    CHECK_THROWS_WITH_AS(constant->lr(0), doctest::Contains("steps count from 1"), Error);
    CHECK_THROWS_WITH_AS(make_schedule({.kind = "step"}), doctest::Contains("unknown kind 'step'"),
                         Error);
    CHECK_THROWS_WITH_AS(make_schedule({.kind = "cosine", .warmup = 5, .total = 5}),
                         doctest::Contains("total > warmup"), Error);
    CHECK_THROWS_WITH_AS(make_schedule({.kind = "noam", .warmup = 0}),
                         doctest::Contains("warmup >= 1"), Error);
  }
}

}  // namespace attn::train
