// The one number parser (train/options/parse.h): whole-text parsing, and a UsageError naming the
// flag for text that is not a number, is out of range for its type, or is not finite.
#include <doctest/doctest.h>

#include "autograd/error.h"
#include "train/options/parse.h"

namespace attn::train::options {

TEST_SUITE("options") {
  TEST_CASE("parse: numbers, booleans and lists from the whole text") {
    CHECK(parse_int("32", "--d_model") == 32);
    CHECK(parse_int("-7", "--x") == -7);
    CHECK(parse_int("9223372036854775807", "--x") == INT64_MAX);
    CHECK(parse_real("5e-3", "--lr") == 0.005);
    CHECK(parse_real("-1.5", "--x") == -1.5);
    CHECK(parse_bool("on", "--b"));
    CHECK(parse_bool("yes", "--b"));
    CHECK_FALSE(parse_bool("0", "--b"));
    CHECK_FALSE(parse_bool("off", "--b"));
    CHECK(parse_ints("16,64,256", "--lengths") == std::vector<int64_t>{16, 64, 256});
    CHECK(parse_reals("0.1,-2", "--x") == std::vector<double>{0.1, -2});
  }

  TEST_CASE("parse: every bad text is a UsageError naming the flag and what was expected") {
    CHECK_THROWS_WITH_AS(parse_int("12x", "--steps"),
                         "--steps: cannot read '12x' as int (a whole number, e.g. 32)", UsageError);
    CHECK_THROWS_WITH_AS(parse_int("", "--steps"), doctest::Contains("cannot read ''"), UsageError);
    CHECK_THROWS_WITH_AS(parse_int("2.5", "--steps"), doctest::Contains("as int"), UsageError);
    CHECK_THROWS_WITH_AS(parse_int("99999999999999999999", "--steps"),
                         "--steps: 99999999999999999999 is out of range for a whole number (at "
                         "most 9223372036854775807)",
                         UsageError);
    CHECK_THROWS_WITH_AS(parse_real("abc", "--lr"), doctest::Contains("--lr: cannot read 'abc'"),
                         UsageError);
    CHECK_THROWS_WITH_AS(parse_real("nan", "--lr"), doctest::Contains("finite"), UsageError);
    CHECK_THROWS_WITH_AS(parse_real("inf", "--lr"), doctest::Contains("finite"), UsageError);
    CHECK_THROWS_WITH_AS(parse_real("1e309", "--lr"),
                         "--lr: 1e309 is out of range for a real (magnitudes from about 2.2e-308 "
                         "to 1.8e308)",
                         UsageError);
    CHECK_THROWS_WITH_AS(parse_real("1e-400", "--lr"), doctest::Contains("1e-400 is out of range"),
                         UsageError);
    CHECK_THROWS_WITH_AS(parse_bool("maybe", "--residual"),
                         "--residual: cannot read 'maybe' as bool (true or false)", UsageError);
    // A list names the whole text, or the element that is out of range.
    CHECK_THROWS_WITH_AS(parse_ints("8,,16", "--lengths"),
                         doctest::Contains("cannot read '8,,16' as ints (comma-separated"),
                         UsageError);
    CHECK_THROWS_WITH_AS(parse_ints("8,1e3", "--lengths"), doctest::Contains("cannot read"),
                         UsageError);
    CHECK_THROWS_WITH_AS(parse_reals("1,1e999", "--x"),
                         doctest::Contains("--x: 1e999 is out of range"), UsageError);
  }
}

}  // namespace attn::train::options
