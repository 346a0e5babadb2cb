// Task generators: each example satisfies its task's definition; configs are validated.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "autograd/error.h"
#include "data/stream.h"
#include "data/tasks/anagram.h"
#include "data/tasks/long_range.h"
#include "data/tasks/recall.h"
#include "data/tasks/sequence.h"
#include "data/tasks/two_relation.h"

namespace attn::data {

TEST_SUITE("data") {
  TEST_CASE("reversal, copy and sort produce their transforms within the length range") {
    Generator gen(3);
    for (SequenceOp op : {SequenceOp::kReverse, SequenceOp::kCopy, SequenceOp::kSort}) {
      SequenceTask task({.op = op, .min_len = 2, .max_len = 5, .alphabet = "dcba"});
      std::map<size_t, int> lengths;
      for (int i = 0; i < 200; ++i) {
        Example ex = task.sample(gen);
        ++lengths[ex.src.size()];
        std::vector<int64_t> want = ex.src;
        if (op == SequenceOp::kReverse) std::reverse(want.begin(), want.end());
        if (op == SequenceOp::kSort) std::sort(want.begin(), want.end());
        CHECK(ex.tgt == want);
        for (int64_t id : ex.src) CHECK((id >= kNumSpecial && id < kNumSpecial + 4));
      }
      CHECK(lengths.size() == 4);  // every length 2..5 appears
      CHECK(lengths.begin()->first == 2);
      CHECK(lengths.rbegin()->first == 5);
    }
    // Sorting follows the alphabet's order: with "dcba", d < c < b < a.
    SequenceTask sort({.op = SequenceOp::kSort, .alphabet = "dcba"});
    const auto& tok = sort.tokenizer();
    CHECK(tok.decode(sort.transform(tok.encode("abcd"))) == "dcba");
  }

  TEST_CASE("sequence task configs are validated naming the field") {
    using C = SequenceTask::Config;
    CHECK_THROWS_WITH_AS(SequenceTask(C{.min_len = 0}), "reversal: min_len must be >= 1, got 0",
                         Error);
    CHECK_THROWS_WITH_AS(SequenceTask(C{.op = SequenceOp::kCopy, .min_len = 5, .max_len = 3}),
                         "copy: max_len (3) must be >= min_len (5)", Error);
    CHECK_THROWS_WITH_AS(SequenceTask(C{.op = SequenceOp::kSort, .alphabet = ""}),
                         "sort: alphabet must not be empty", Error);
  }

  TEST_CASE("stream position restores the exact continuation; held-out sets are fixed") {
    auto task = std::make_shared<SequenceTask>(SequenceTask::Config{});
    ExampleStream a(task, 7);
    a.next(5);
    const std::string pos = a.position();
    auto first = a.next(10);
    ExampleStream b(task, 999);
    b.set_position(pos);
    CHECK(b.count() == 5);
    auto second = b.next(10);
    for (size_t i = 0; i < first.size(); ++i) CHECK(first[i].src == second[i].src);
    CHECK_THROWS_WITH_AS(b.set_position("garbage 1 2"), doctest::Contains("not a saved stream"),
                         Error);
    CHECK_THROWS_AS(b.set_position("attnlab-stream v1 3 not-a-state"), Error);
    CHECK(b.count() == 15);  // unchanged by the failed restores
    auto h1 = make_heldout(*task, 20, 11), h2 = make_heldout(*task, 20, 11);
    for (size_t i = 0; i < h1.size(); ++i) CHECK(h1[i].src == h2[i].src);
  }

  TEST_CASE("anagram: the label says whether the words follow the template order") {
    AnagramTask task({});
    Generator gen(5);
    const auto& tok = task.tokenizer();
    const auto slots = AnagramTask::slots();
    int shuffled = 0;
    for (int i = 0; i < 400; ++i) {
      Example ex = task.sample(gen);
      REQUIRE(ex.src.size() == 6);
      bool fits = true;
      for (size_t k = 0; k < 6; ++k) {
        const std::string& w = tok.vocab().token(ex.src[k]);
        fits = fits && std::find(slots[k].begin(), slots[k].end(), w) != slots[k].end();
      }
      CHECK(ex.label == (fits ? 1 : 0));
      shuffled += ex.label == 0;
    }
    CHECK(shuffled > 150);
    CHECK(shuffled < 250);
    auto demo = anagram_demo_sentences();
    auto sorted = [&](const std::string& s) {
      auto ids = tok.encode(s);
      std::sort(ids.begin(), ids.end());
      return ids;
    };
    CHECK(sorted(demo[0]) == sorted(demo[1]));
    CHECK(sorted(demo[0]) == sorted(demo[2]));
    const auto ids = tok.encode(demo[0]);
    CHECK(std::count(ids.begin(), ids.end(), kUnk) == 0);
  }

  TEST_CASE("two-relation toy: features, planted content and both target maps") {
    TwoRelationTask toy({});
    Generator gen(11);
    TwoRelationBatch b = toy.sample(8, gen);
    CHECK(b.x.shape() == Shape{8, 4, 4});
    CHECK(b.target_position.shape() == Shape{8, 4, 4});
    for (int64_t n = 0; n < 8; ++n) {
      const int64_t p = b.planted[static_cast<size_t>(n)];
      CHECK(b.x.at({n, p, 0}) == 1);
      CHECK(b.x.at({n, p, 1}) == 0);
      for (int64_t t = 0; t < 4; ++t) {
        // The course's code: position bits are the first two columns of eye(4).
        CHECK(b.x.at({n, t, 2}) == (t == 0 ? 1 : 0));
        CHECK(b.x.at({n, t, 3}) == (t == 1 ? 1 : 0));
        for (int64_t k = 0; k < 4; ++k) {
          CHECK(b.target_position.at({n, t, k}) == (k == 2 ? 1 : 0));
          CHECK(b.target_content.at({n, t, k}) == (k == p ? 1 : 0));
        }
      }
    }
    TwoRelationTask binary({.position_code = PositionCode::kBinary});
    TwoRelationBatch c = binary.sample(1, gen);
    CHECK(c.x.at({0, 2, 2}) == 1);  // 2 = binary 10
    CHECK(c.x.at({0, 2, 3}) == 0);
    CHECK(c.x.at({0, 3, 3}) == 1);  // 3 = binary 11
    CHECK_THROWS_WITH_AS(TwoRelationTask({.target_position = 4}),
                         "two-relation: target_position must be in [0, 3], got 4", Error);
    CHECK_THROWS_WITH_AS(TwoRelationTask({.seq_len = 5, .position_code = PositionCode::kBinary}),
                         doctest::Contains("position_dims = 2 bits cannot give 5 positions"),
                         Error);
    CHECK_THROWS_WITH_AS(TwoRelationTask({.content_dims = 0}), doctest::Contains("content_dims"),
                         Error);
  }

  TEST_CASE("associative recall answers with the value stored under the queried key") {
    RecallTask task({.num_pairs = 5});
    Generator gen(2);
    const int64_t query = task.tokenizer().vocab().id("?");
    for (int i = 0; i < 100; ++i) {
      Example ex = task.sample(gen);
      REQUIRE(ex.src.size() == 12);
      CHECK(ex.src[10] == query);
      int found = 0;
      for (size_t k = 0; k < 10; k += 2)
        if (ex.src[k] == ex.src[11]) {
          CHECK(ex.tgt == std::vector<int64_t>{ex.src[k + 1]});
          ++found;
        }
      CHECK(found == 1);  // keys are distinct and the query is one of them
      CHECK(ex.label == ex.tgt[0]);
    }
    CHECK_THROWS_WITH_AS(RecallTask({.num_pairs = 30}),
                         "recall: num_pairs must be in [1, 26], got 30", Error);
    CHECK_THROWS_WITH_AS(RecallTask({.keys = "ab1", .values = "12"}),
                         doctest::Contains("both a key and a value"), Error);
  }

  TEST_CASE("k-hop follows the pointers k times") {
    for (int64_t hops : {1, 2, 3}) {
      KHopTask task({.num_nodes = 6, .hops = hops});
      Generator gen(static_cast<uint64_t>(hops));
      for (int i = 0; i < 50; ++i) {
        Example ex = task.sample(gen);
        REQUIRE(ex.src.size() == 14);
        std::map<int64_t, int64_t> next;
        for (size_t k = 0; k < 12; k += 2) next[ex.src[k]] = ex.src[k + 1];
        CHECK(next.size() == 6);
        int64_t at = ex.src[13];
        for (int64_t h = 0; h < hops; ++h) {
          CHECK(next.at(at) != at);
          at = next.at(at);
        }
        CHECK(ex.tgt == std::vector<int64_t>{at});
      }
    }
    CHECK_THROWS_WITH_AS(KHopTask({.hops = 0}), "khop: hops must be >= 1, got 0", Error);
    CHECK_THROWS_WITH_AS(KHopTask({.num_nodes = 3, .alphabet = "ab"}),
                         "khop: num_nodes must be in [2, 2], got 3", Error);
  }

  TEST_CASE("long-range tasks: labels follow the distant markers / the majority") {
    LongRangeTask match({.seq_len = 64});
    LongRangeTask major({.mode = LongRangeMode::kMajority, .seq_len = 64});
    const int64_t marker = match.tokenizer().vocab().id("#");
    const int64_t a = major.tokenizer().vocab().id("a"), b = major.tokenizer().vocab().id("b");
    Generator gen(9);
    int ones = 0;
    for (int i = 0; i < 200; ++i) {
      Example ex = match.sample(gen);
      REQUIRE(ex.src.size() == 64);
      std::vector<size_t> at;
      for (size_t k = 0; k < ex.src.size(); ++k)
        if (ex.src[k] == marker) at.push_back(k);
      REQUIRE(at.size() == 2);
      CHECK(at[0] < 16);
      CHECK(at[1] >= 48);
      CHECK(ex.label == (ex.src[at[0] + 1] == ex.src[at[1] + 1] ? 1 : 0));
      ones += static_cast<int>(ex.label);
      Example m = major.sample(gen);
      const auto na = std::count(m.src.begin(), m.src.end(), a);
      const auto nb = std::count(m.src.begin(), m.src.end(), b);
      CHECK(m.label == (na > nb ? 1 : 0));
      CHECK(na != nb);
    }
    CHECK(ones > 70);
    CHECK(ones < 130);
    CHECK_THROWS_WITH_AS(LongRangeTask({.seq_len = 4}), "longrange: seq_len must be >= 8, got 4",
                         Error);
    CHECK_THROWS_WITH_AS(LongRangeTask({.alphabet = "a#"}), doctest::Contains("marker"), Error);
    CHECK_THROWS_WITH_AS(LongRangeTask({.mode = LongRangeMode::kMajority, .alphabet = "xyz"}),
                         doctest::Contains("'a' and 'b'"), Error);
  }
}

}  // namespace attn::data
