// The open mixer registry (nn/mixer/mixer_registry.h) and the gradient check every plugin row
// passes before training (nn/mixer/mixer_check.h): correct mixers pass far inside the tolerance,
// a wrong backward fails, names are unique.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "nn/linear.h"
#include "nn/mixer/mixer_check.h"
#include "nn/mixer/mixer_registry.h"

namespace attn::nn {

namespace {

// y = x * x whose backward forgets the factor 2 when `wrong` (dx = dy x instead of 2 dy x).
struct SquareOp final : Op {
  bool wrong = false;
  void backward() override {
    const Tensor& x = inputs[0].value();
    Tensor dx = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) dx[i] = dy()[i] * x[i] * (wrong ? 1 : 2);
    accumulate(0, dx);
  }
  const char* name() const override { return "square"; }
};

Var square(const Var& x, bool wrong) {
  auto op = std::make_unique<SquareOp>();
  op->wrong = wrong;
  Tensor y = x.value().clone();
  for (int64_t i = 0; i < y.numel(); ++i) y[i] = y[i] * y[i];
  return record(std::move(op), {x}, std::move(y));
}

// A linear map followed by the square: the parameters and the input both get the error.
MixerRow square_row(bool wrong) {
  return {
      wrong ? "square-wrong" : "square", "test", "", true,
      [wrong](const MixerShape& s, int64_t, Generator& g) {
        auto lin = std::make_shared<Linear>(s.d_model, s.d_model, true, g);
        return Mixer{lin, [lin, wrong](const Var& x) { return square(lin->forward(x), wrong); }};
      }};
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("mixer check: the built-in mixers pass far inside the tolerance") {
    for (const char* name : {"softmax", "linear", "window"}) {
      const MixerRow& row = *mixer_registry().find(name);
      const MixerCheck c = check_mixer_gradient(row);
      std::printf("  %-10s worst |a - n| / tolerance = %.4f\n", row.name.c_str(), c.worst_ratio);
      CHECK_MESSAGE(c.ok, row.name << ": " << c.detail);
      CHECK(c.worst_ratio < 0.2);
    }
    const MixerCheck square = check_mixer_gradient(square_row(false));
    CHECK_MESSAGE(square.ok, square.detail);
  }

  TEST_CASE("mixer check: a backward that drops a factor fails, naming the direction") {
    const MixerCheck c = check_mixer_gradient(square_row(true));
    std::printf("  square-wrong worst |a - n| / tolerance = %.1f\n", c.worst_ratio);
    CHECK_FALSE(c.ok);
    CHECK(c.worst_ratio > 10);
    CHECK(c.detail.find("analytic") != std::string::npos);
  }

  TEST_CASE("mixer check: a mixer that changes the shape fails") {
    MixerRow row{"halve", "test", "", true, [](const MixerShape&, int64_t, Generator&) {
                   return Mixer{nullptr, [](const Var& x) { return sum(x, 2); }};
                 }};
    const MixerCheck c = check_mixer_gradient(row);
    CHECK_FALSE(c.ok);
    CHECK(c.detail.find("returns its input's shape") != std::string::npos);
  }

  TEST_CASE("mixer registry: names are unique ignoring case, and valid") {
    MixerRegistry r = mixer_registry();  // a copy: the process's registry stays as it was
    MixerRow row = square_row(false);
    row.name = "Softmax";
    row.origin = "mine.so";
    try {
      r.add(row);
      FAIL("a taken name was accepted");
    } catch (const UsageError& e) {
      const std::string m = e.what();
      CHECK(m == "mixer name 'Softmax' is taken (mixer 'softmax', built in); choose another");
    }
    row.name = "two words";
    CHECK_THROWS_AS(r.add(row), UsageError);
    row.name = "gated";
    row.make = nullptr;
    CHECK_THROWS_AS(r.add(row), UsageError);
    row = square_row(false);
    row.origin = "mine.so";
    r.add(row);
    REQUIRE(r.find("square") != nullptr);
    CHECK(r.plugin_rows().size() == 1);
    CHECK(mixer_registry().find("square") == nullptr);
  }

  // Found by fuzz_plugin: the refusal printed the name as it was, so a NUL ended the message
  // inside the quotes (what() is a C string) and an escape sequence reached the terminal.
  TEST_CASE("mixer registry: a refused name is quoted with its control bytes visible") {
    MixerRegistry r = mixer_registry();
    MixerRow row = square_row(false);
    row.name = std::string("ab\0c\x1b[2J", 8);
    try {
      r.add(row);
      FAIL("a name with control bytes was accepted");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()) ==
            "mixer name 'ab\\x00c\\x1b[2J' must be non-empty and use only letters, digits, "
            "'_', '-' and '.'");
    }
    row = square_row(false);
    row.origin = "odd\x1b[2J.so";  // the holder's file, quoted the same way
    r.add(row);
    row.name = "Square";
    try {
      r.add(row);
      FAIL("a taken name was accepted");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()) ==
            "mixer name 'Square' is taken (mixer 'square', from odd\\x1b[2J.so); choose another");
    }
  }
}

}  // namespace attn::nn
