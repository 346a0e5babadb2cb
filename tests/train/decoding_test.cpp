// Greedy and beam search on hand-made distributions with a known best sequence.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "autograd/error.h"
#include "train/decoding.h"

namespace attn::train {

namespace {
constexpr int64_t kEos = 2, kA = 3, kB = 4, kV = 5;

// A tiny "language model" given by a table: prefix (after the prompt) -> next-token probs.
// From the start A is likelier (0.6) than B (0.4), but after A every continuation is
// uncertain while after B the end is almost sure:
//   P(A EOS) = 0.6 * 0.4 = 0.24        P(B EOS) = 0.4 * 0.95 = 0.38  <- the best sequence
// Greedy commits to A and ends with A EOS; a beam of 2 keeps B alive and finds B EOS.
Tensor table_model(const std::vector<std::vector<int64_t>>& prefixes) {
  static const std::map<std::vector<int64_t>, std::vector<double>> table{
      {{}, {0, 0, 0, 0.6, 0.4}},
      {{kA}, {0, 0, 0.4, 0.3, 0.3}},
      {{kB}, {0, 0, 0.95, 0.03, 0.02}},
  };
  Tensor out({static_cast<int64_t>(prefixes.size()), kV});
  for (size_t i = 0; i < prefixes.size(); ++i) {
    std::vector<int64_t> gen(prefixes[i].begin() + 1, prefixes[i].end());  // drop the prompt
    auto it = table.find(gen);
    // Any longer prefix: ends surely-ish, 0.5 EOS, 0.25 A, 0.25 B.
    const std::vector<double> p =
        it != table.end() ? it->second : std::vector<double>{0, 0, 0.5, 0.25, 0.25};
    for (int64_t v = 0; v < kV; ++v)
      out[static_cast<int64_t>(i) * kV + v] =
          static_cast<real>(std::log(p[static_cast<size_t>(v)]));
  }
  return out;
}

// Exhaustive search over every sequence of up to max_len tokens ending in EOS.
double best_by_enumeration(std::vector<int64_t> prefix, double logp, int max_len) {
  if (max_len == 0) return -INFINITY;
  const Tensor lp = table_model({prefix});
  double best = logp + lp[kEos];
  for (int64_t t : {kA, kB}) {
    auto next = prefix;
    next.push_back(t);
    best = std::max(best, best_by_enumeration(next, logp + lp[t], max_len - 1));
  }
  return best;
}
}  // namespace

TEST_SUITE("train") {
  TEST_CASE("beam search finds a better sequence than greedy") {
    const std::vector<int64_t> prompt{1};
    CHECK(greedy_decode(table_model, prompt, kEos, 10) == std::vector<int64_t>{kA});
    auto beams = beam_search(table_model, prompt, kEos,
                             {.beam_width = 2, .max_new_tokens = 10, .alpha = 0, .num_return = 2});
    REQUIRE(beams.size() == 2);
    CHECK(beams[0].tokens == std::vector<int64_t>{kB});
    CHECK(beams[0].finished);
    CHECK(beams[0].log_prob == doctest::Approx(std::log(0.38)).epsilon(1e-6));
    CHECK(beams[0].log_prob == doctest::Approx(best_by_enumeration(prompt, 0, 6)).epsilon(1e-6));
    CHECK(beams[1].tokens == std::vector<int64_t>{kA});  // log 0.24
    // Width 1 is greedy.
    auto one = beam_search(table_model, prompt, kEos, {.beam_width = 1, .alpha = 0});
    CHECK(one[0].tokens == std::vector<int64_t>{kA});
  }

  TEST_CASE("length penalty: GNMT and power forms; unfinished hypotheses at the limit") {
    CHECK(length_penalty(1, 0.6, LengthPenalty::kGnmt) == doctest::Approx(1.0));
    CHECK(length_penalty(7, 1.0, LengthPenalty::kGnmt) == doctest::Approx(2.0));
    CHECK(length_penalty(4, 0.5, LengthPenalty::kPower) == doctest::Approx(2.0));
    CHECK(length_penalty(9, 0.0, LengthPenalty::kPower) == doctest::Approx(1.0));
    // A model that never ends: hypotheses stop at max_new_tokens, unfinished.
    NextLogProbs never = [](const std::vector<std::vector<int64_t>>& p) {
      Tensor t = Tensor::full({static_cast<int64_t>(p.size()), kV}, -INFINITY);
      for (size_t i = 0; i < p.size(); ++i) t[static_cast<int64_t>(i) * kV + kA] = 0;
      return t;
    };
    auto h = beam_search(never, {1}, kEos, {.beam_width = 3, .max_new_tokens = 4});
    REQUIRE(h.size() == 1);
    CHECK_FALSE(h[0].finished);
    CHECK(h[0].tokens == std::vector<int64_t>(4, kA));
    CHECK(greedy_decode(never, {1}, kEos, 4) == std::vector<int64_t>(4, kA));
  }

  TEST_CASE("batched greedy decoding stops each row at its own EOS") {
    // Row with prompt 10 emits A then EOS; row with prompt 11 emits B, B, EOS.
    NextLogProbs model = [](const std::vector<std::vector<int64_t>>& p) {
      Tensor t = Tensor::full({static_cast<int64_t>(p.size()), kV}, -10);
      for (size_t i = 0; i < p.size(); ++i) {
        const size_t n = p[i].size() - 1;
        const int64_t tok = p[i][0] == 10 ? (n < 1 ? kA : kEos) : (n < 2 ? kB : kEos);
        t[static_cast<int64_t>(i) * kV + tok] = 0;
      }
      return t;
    };
    auto out = greedy_decode_batch(model, {{10}, {11}}, kEos, 8);
    CHECK(out[0] == std::vector<int64_t>{kA});
    CHECK(out[1] == std::vector<int64_t>{kB, kB});
    CHECK_THROWS_WITH_AS(beam_search(model, {1}, kEos, {.beam_width = 0}),
                         doctest::Contains("beam_width >= 1"), Error);
  }
}

}  // namespace attn::train
