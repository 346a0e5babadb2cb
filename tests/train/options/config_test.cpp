// Config fields (train/options/config.h): typed defaults, overrides from command-line text, the
// errors a student sees for a misspelt field or a bad value, and --help grouped by heading.
#include <doctest/doctest.h>

#include "autograd/error.h"
#include "train/options/config.h"

namespace attn::train::options {

namespace {
Config sample() {
  Config c;
  c.add_int("d_model", 32, "width", {.min = 1})
      .add_real("lr", 5e-3, "learning rate", {.min = 0, .max = 1})
      .add_bool("positions", false, "add positions")
      .add_ints("lengths", {16, 64}, "lengths", {.min = 1})
      .add_reals("x", {1, 0.5}, "numbers")
      .add_string("mask", "none", "mask kind", {"none", "causal"});
  return c;
}
}  // namespace

TEST_SUITE("options") {
  TEST_CASE("config: defaults, overrides, '-' for '_', and the changed fields") {
    Config c = sample();
    CHECK(c.get_int("d_model") == 32);
    CHECK(c.changed().empty());
    c.set("d-model", "64");
    c.set("lr", "1e-3");
    c.set("positions", "true");
    c.set("lengths", "8,16,32");
    c.set("x", "-1.5,2");
    c.set("mask", "causal");
    CHECK(c.get_int("d_model") == 64);
    CHECK(c.get_real("lr") == doctest::Approx(1e-3));
    CHECK(c.get_bool("positions"));
    CHECK(c.get_ints("lengths") == std::vector<int64_t>{8, 16, 32});
    CHECK(c.get_reals("x") == std::vector<double>{-1.5, 2});
    CHECK(c.get_string("mask") == "causal");
    CHECK(c.changed() ==
          std::vector<std::string>{"d_model", "lr", "positions", "lengths", "x", "mask"});
    CHECK(
        c.to_json().dump() ==
        R"({"d_model":64,"lr":0.001,"positions":true,"lengths":[8,16,32],"x":[-1.5,2.0],"mask":"causal"})");
    CHECK(c.help_text().find("--d_model <int>") != std::string::npos);
    CHECK(c.help_text().find("default 32, now 64") != std::string::npos);
  }

  TEST_CASE("config: bad names and values are UsageErrors naming what is wrong") {
    Config c = sample();
    auto message = [&](const std::string& k, const std::string& v) {
      try {
        c.set(k, v);
      } catch (const UsageError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    CHECK(message("d_modle", "3").find("Did you mean --d_model?") != std::string::npos);
    CHECK(message("d_model", "3x").find("cannot read '3x' as int") != std::string::npos);
    CHECK(message("d_model", "").find("cannot read") != std::string::npos);
    CHECK(message("d_model", "0").find("at least 1") != std::string::npos);
    CHECK(message("lr", "2").find("between 0 and 1") != std::string::npos);
    CHECK(message("lr", "nan").find("cannot read") != std::string::npos);
    CHECK(message("positions", "maybe").find("true or false") != std::string::npos);
    CHECK(message("lengths", "8,,16").find("comma-separated") != std::string::npos);
    CHECK(message("lengths", "8,0").find("at least 1") != std::string::npos);
    CHECK(message("mask", "casual").find("Did you mean causal?") != std::string::npos);
    // Well-formed numbers too large (or small) for their type say so, naming the element.
    CHECK(message("lr", "1e309") ==
          "--lr: 1e309 is out of range for a real (magnitudes from about 2.2e-308 to 1.8e308)");
    CHECK(message("lr", "1e-400").find("1e-400 is out of range") != std::string::npos);
    CHECK(message("d_model", "99999999999999999999").find("is out of range for a whole number") !=
          std::string::npos);
    CHECK(message("lengths", "8,1e3").find("cannot read") != std::string::npos);
    CHECK(message("x", "1,1e999").find("1e999 is out of range") != std::string::npos);
    CHECK(c.get_int("d_model") == 32);              // nothing changed by the failed attempts
    CHECK_THROWS_AS(c.get_real("d_model"), Error);  // wrong type: a programming error
    CHECK_THROWS_AS(c.get_int("nope"), Error);
    CHECK_THROWS_AS(c.add_int("d_model", 1, "again"), Error);
  }

  TEST_CASE("config: exclusive bounds, '--' before a name, text(), and a field in two places") {
    Config c;
    c.add_real("dropout", 0.1, "p", {.min = 0, .max = 1, .max_exclusive = true})
        .add_real("lr", 1e-3, "rate", {.min = 0, .min_exclusive = true});
    auto message = [&](const std::string& k, const std::string& v) {
      try {
        c.set(k, v);
      } catch (const UsageError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    CHECK(message("dropout", "1") ==
          "--dropout: 1 is out of range; it must be at least 0 and less than 1");
    CHECK(message("lr", "0") == "--lr: 0 is out of range; it must be greater than 0");
    CHECK(message("dropout", "0.999") == "no error");
    CHECK(message("lr", "1e-9") == "no error");
    CHECK(message("--dropout", "0.5") == "no error");  // as the command line spells it
    CHECK(c.text("dropout") == "0.5");
    CHECK(message("--dropuot", "0.5") == "unknown field --dropuot. Did you mean --dropout?");
    CHECK_THROWS_AS(c.text("nope"), Error);
  }

  TEST_CASE("config: help lists the owner's fields first, then each heading once, in order") {
    Config c;
    c.add_int("pairs", 8, "pairs");
    c.heading("Model").add_int("d_model", 32, "width");
    c.heading("Seed").add_int("seed", 0, "seed");
    c.heading("Model").add_int("nhead", 4, "heads");
    c.heading("").add_bool("plot", true, "draw");
    const std::string help = c.help_text("Fields");
    const auto at = [&](const std::string& s) { return help.find(s); };
    CHECK(help.rfind("Fields:\n", 0) == 0);
    CHECK(at("--pairs") < at("--plot"));
    CHECK(at("--plot") < at("Model:\n"));
    CHECK(at("Model:\n") < at("--d_model"));
    CHECK(at("--d_model") < at("--nhead"));
    CHECK(at("--nhead") < at("Seed:\n"));
    CHECK(help.find("Model:", at("Model:") + 1) == std::string::npos);  // one heading per group
    // One column for every flag: the help texts start at the same offset on every line.
    CHECK(help.find("  --pairs <int>    pairs (default 8)") != std::string::npos);
    CHECK(help.find("  --d_model <int>  width (default 32)") != std::string::npos);
  }
}

}  // namespace attn::train::options
