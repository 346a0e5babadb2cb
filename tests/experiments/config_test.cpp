// Config fields: typed defaults, overrides from command-line text, and the errors a student
// sees for a misspelt field or a bad value.
#include <doctest/doctest.h>

#include "autograd/error.h"
#include "experiments/config.h"
#include "experiments/suggest.h"

namespace attn::experiments {

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

TEST_SUITE("experiments") {
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

  TEST_CASE("suggest: edit distance and closest names") {
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("Anagrams", "anagrams") == 0);
    const std::vector<std::string> names{"worked-example", "anagrams", "mha-heads", "memory-wall"};
    CHECK(closest_names("anagram", names) == std::vector<std::string>{"anagrams"});
    CHECK(closest_names("memory", names) == std::vector<std::string>{"memory-wall"});
    CHECK(closest_names("zzzzzz", names).empty());
    CHECK(did_you_mean("zzzzzz", names).find("Valid names: worked-example, anagrams") !=
          std::string::npos);
  }
}

}  // namespace attn::experiments
