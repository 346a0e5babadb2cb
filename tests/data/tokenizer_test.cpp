// Tokenizer and UTF-8 splitting: ids, specials, unknowns, errors.
#include <doctest/doctest.h>

#include "autograd/error.h"
#include "data/tokenizer.h"
#include "data/utf8.h"

namespace attn::data {

TEST_SUITE("data") {
  TEST_CASE("char tokenizer: specials first, alphabet order, round trip") {
    auto tok = Tokenizer::chars("abc");
    CHECK(tok.vocab_size() == kNumSpecial + 3);
    CHECK(tok.encode("cab") == std::vector<int64_t>{kNumSpecial + 2, kNumSpecial, kNumSpecial + 1});
    CHECK(tok.decode({kBos, kNumSpecial + 2, kNumSpecial, kEos, kPad}) == "ca");
    CHECK(tok.decode({kBos, kNumSpecial}, false) == "<bos>a");
    CHECK(tok.encode("az")[1] == kUnk);
  }

  TEST_CASE("char tokenizer splits UTF-8 characters, not bytes") {
    auto chars = utf8_chars("h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "test");  // h é € 😀
    REQUIRE(chars.size() == 4);
    CHECK(chars[1] == "\xC3\xA9");
    auto tok = Tokenizer::chars_of("\xC3\xA9t\xC3\xA9");  // "été"
    CHECK(tok.vocab_size() == kNumSpecial + 2);
    CHECK(tok.decode(tok.encode("\xC3\xA9t\xC3\xA9")) == "\xC3\xA9t\xC3\xA9");
  }

  TEST_CASE("invalid UTF-8 is rejected with the byte offset") {
    CHECK_THROWS_WITH_AS(utf8_chars("ab\x80", "file x"),
                         doctest::Contains("file x: not valid UTF-8 at byte 2"), Error);
    CHECK_THROWS_WITH_AS(utf8_chars("a\xC3", "t"), doctest::Contains("ends inside"), Error);
    CHECK_THROWS_WITH_AS(utf8_chars("\xC0\x80", "t"), doctest::Contains("overlong"), Error);
    CHECK_THROWS_WITH_AS(utf8_chars("\xED\xA0\x80", "t"), doctest::Contains("scalar"), Error);
  }

  TEST_CASE("word tokenizer and errors") {
    auto tok = Tokenizer::words({"the", "cat", "sat"});
    CHECK(tok.encode("the  cat\tsat dog") ==
          std::vector<int64_t>{kNumSpecial, kNumSpecial + 1, kNumSpecial + 2, kUnk});
    CHECK(tok.decode(tok.encode("the cat sat")) == "the cat sat");
    CHECK_THROWS_WITH_AS(Tokenizer::chars(""), doctest::Contains("alphabet is empty"), Error);
    CHECK_THROWS_WITH_AS(Tokenizer::words({"two words"}), doctest::Contains("not a single word"),
                         Error);
    CHECK_THROWS_WITH_AS(tok.vocab().token(99), doctest::Contains("token id 99"), Error);
  }
}

}  // namespace attn::data
