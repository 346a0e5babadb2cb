// Batching and masks, and BERT's masking statistics.
#include <doctest/doctest.h>

#include "autograd/error.h"
#include "data/batch.h"
#include "data/mlm.h"

namespace attn::data {

namespace {
std::vector<real> row(const Tensor& t, int64_t b) {
  const int64_t L = t.size(1);
  return {t.data() + b * L, t.data() + (b + 1) * L};
}
using R = std::vector<real>;
constexpr real I = static_cast<real>(kIgnoreIndex);
}  // namespace

TEST_SUITE("data") {
  TEST_CASE("seq2seq batch: BOS/EOS placement, padding and masks") {
    std::vector<Example> ex{{{10, 11, 12}, {12, 11, 10}, -1}, {{20}, {20}, -1}};
    Batch b = collate_seq2seq(ex);
    CHECK(b.src.shape() == Shape{2, 3});
    CHECK(row(b.src, 1) == R{20, kPad, kPad});
    CHECK(row(b.src_pad_mask, 1) == R{0, 1, 1});
    CHECK(row(b.tgt_in, 0) == R{kBos, 12, 11, 10});
    CHECK(row(b.tgt_out, 0) == R{12, 11, 10, kEos});
    CHECK(row(b.tgt_in, 1) == R{kBos, 20, kPad, kPad});
    CHECK(row(b.tgt_out, 1) == R{20, kEos, I, I});
    CHECK(row(b.tgt_pad_mask, 1) == R{0, 0, 1, 1});
    CHECK(b.num_target_tokens == 6);
    CHECK(b.causal_mask.to_vector() == R{0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0});
    CHECK(collate_seq2seq(ex, 6).src.shape() == Shape{2, 6});
    // src_eos: each source ends with EOS, before its padding; the target side is unchanged.
    Batch e = collate_seq2seq(ex, 0, /*src_eos=*/true);
    CHECK(row(e.src, 0) == R{10, 11, 12, kEos});
    CHECK(row(e.src, 1) == R{20, kEos, kPad, kPad});
    CHECK(row(e.src_pad_mask, 1) == R{0, 0, 1, 1});
    CHECK(e.src_lengths == std::vector<int64_t>{4, 2});
    CHECK(e.tgt_out.to_vector() == b.tgt_out.to_vector());
  }

  TEST_CASE("decoder-only batch scores only the answer") {
    Batch b = collate_decoder_only({{{10, 11}, {11, 10}, -1}});
    // sequence: BOS 10 11 SEP 11 10 EOS
    CHECK(row(b.tgt_in, 0) == R{kBos, 10, 11, kSep, 11, 10});
    CHECK(row(b.tgt_out, 0) == R{I, I, I, 11, 10, kEos});
    CHECK(b.src_lengths[0] == 4);
    CHECK(b.num_target_tokens == 3);
  }

  TEST_CASE("classification and language-model batches") {
    Batch c = collate_classification({{{7, 8}, {}, 1}, {{9}, {}, 0}});
    CHECK(row(c.src, 0) == R{kBos, 7, 8});
    CHECK(row(c.src_pad_mask, 1) == R{0, 0, 1});
    CHECK(c.labels.to_vector() == R{1, 0});
    CHECK_THROWS_WITH_AS(collate_classification({{{7}, {}, -1}}), doctest::Contains("no label"),
                         Error);
    Batch lm = collate_language_model({{{7, 8, 9}, {8, 9, 10}, -1}});
    CHECK(row(lm.tgt_in, 0) == R{7, 8, 9});
    CHECK(row(lm.tgt_out, 0) == R{8, 9, 10});
    CHECK_THROWS_WITH_AS(collate_seq2seq({}), doctest::Contains("no examples"), Error);
  }

  TEST_CASE("MLM masking: 15% chosen, 80/10/10, specials untouched") {
    const int64_t V = 40, B = 64, T = 256;
    Generator gen(1);
    Tensor tokens({B, T});
    for (int64_t i = 0; i < tokens.numel(); ++i)
      tokens[i] = static_cast<real>(i % T == 0 ? kBos : kNumSpecial + gen.randint(V - kNumSpecial));
    MlmBatch m = mlm_mask(tokens, V, gen);
    int64_t chosen = 0, masked = 0, random = 0, kept = 0, regular = 0;
    for (int64_t i = 0; i < tokens.numel(); ++i) {
      if (tokens[i] == kBos) {
        CHECK(m.labels[i] == I);
        CHECK(m.input[i] == kBos);
        continue;
      }
      ++regular;
      if (m.labels[i] == I) {
        CHECK(m.input[i] == tokens[i]);
        continue;
      }
      ++chosen;
      CHECK(m.labels[i] == tokens[i]);
      if (m.input[i] == kMask)
        ++masked;
      else if (m.input[i] == tokens[i])
        ++kept;  // includes random draws that hit the same token (1/34 of the random 10%)
      else
        ++random;
      CHECK(m.input[i] != kPad);
    }
    CHECK(chosen == m.num_selected);
    const double f = static_cast<double>(chosen) / static_cast<double>(regular);
    CHECK(f == doctest::Approx(0.15).epsilon(0.08));  // ~2450 chosen: 3 sigma ~ 5%
    CHECK(static_cast<double>(masked) / chosen == doctest::Approx(0.8).epsilon(0.04));
    CHECK(static_cast<double>(random) / chosen == doctest::Approx(0.1 * 33 / 34).epsilon(0.2));
    CHECK(static_cast<double>(kept) / chosen == doctest::Approx(0.1 + 0.1 / 34).epsilon(0.2));
    CHECK_THROWS_WITH_AS(mlm_mask(tokens, V, gen, {.select_prob = 1.5}),
                         doctest::Contains("select_prob must be in [0, 1]"), Error);
  }
}

}  // namespace attn::data
