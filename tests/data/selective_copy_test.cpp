// Selective copying (data/tasks/selective_copy.h): the layout of every example, the answer equal
// to the data tokens in order, positions that vary, and validated configs.
#include <doctest/doctest.h>

#include <set>

#include "autograd/error.h"
#include "data/tasks/selective_copy.h"

namespace attn::data {

TEST_SUITE("data") {
  TEST_CASE("selective copy: data tokens among noise, then markers; the answer is the data") {
    SelectiveCopyTask task({.seq_len = 12, .num_tokens = 3, .alphabet = "abcd"});
    const Tokenizer& tok = task.tokenizer();
    CHECK(tok.vocab_size() == kNumSpecial + 6);
    CHECK(task.num_classes() == tok.vocab_size());
    CHECK(task.max_src_len() == 15);
    Generator gen(5);
    std::set<std::vector<int64_t>> layouts;
    std::set<int64_t> seen;
    for (int i = 0; i < 300; ++i) {
      const Example ex = task.sample(gen);
      REQUIRE(ex.src.size() == 15);
      REQUIRE(ex.tgt.size() == 3);
      std::vector<int64_t> data, where;
      for (size_t p = 0; p < 12; ++p) {
        CHECK(ex.src[p] != task.marker_id());
        if (ex.src[p] == task.noise_id()) continue;
        data.push_back(ex.src[p]);
        where.push_back(static_cast<int64_t>(p));
        CHECK((ex.src[p] >= kNumSpecial && ex.src[p] < kNumSpecial + 4));
      }
      CHECK(data == ex.tgt);  // exactly three data tokens, in order of appearance
      for (size_t p = 12; p < 15; ++p) CHECK(ex.src[p] == task.marker_id());
      layouts.insert(where);
      seen.insert(data.begin(), data.end());
    }
    CHECK(layouts.size() > 100);  // C(12,3) = 220 layouts: the positions really vary
    CHECK(seen.size() == 4);      // every data token occurs
    CHECK(tok.decode(task.sample(gen).src).substr(12) == "***");
  }

  TEST_CASE("selective copy: configs are validated naming the field") {
    using C = SelectiveCopyTask::Config;
    CHECK_THROWS_WITH_AS(SelectiveCopyTask(C{.num_tokens = 0}),
                         "selective-copy: num_tokens must be >= 1, got 0", Error);
    CHECK_THROWS_WITH_AS(SelectiveCopyTask(C{.seq_len = 3, .num_tokens = 4}),
                         "selective-copy: seq_len must be >= 4, got 3", Error);
    CHECK_THROWS_AS(SelectiveCopyTask(C{.alphabet = "ab.c"}), Error);
    CHECK_THROWS_AS(SelectiveCopyTask(C{.alphabet = "abca"}), Error);
    CHECK_THROWS_AS(SelectiveCopyTask(C{.alphabet = ""}), Error);
  }
}

}  // namespace attn::data
