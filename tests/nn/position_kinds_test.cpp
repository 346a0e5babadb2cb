// The positional schemes of nn/positional/position_kind.h in the three transformer models: T5's
// buckets from their definition, names and errors, the modules each scheme adds (and that the
// defaults add none), and cached decoding equal to recomputation with every scheme.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/positional/position_kind.h"
#include "nn/positional/t5_bias.h"
#include "nn/transformer/decoder_only.h"
#include "nn/transformer/encoder_only.h"
#include "nn/transformer/seq2seq.h"

namespace attn::nn {

namespace {

const PositionKind kAll[] = {PositionKind::kNone, PositionKind::kLearned, PositionKind::kSinusoidal,
                             PositionKind::kRope, PositionKind::kAlibi,   PositionKind::kT5Bias};

Seq2SeqOptions tiny_seq2seq(PositionKind k) {
  Seq2SeqOptions o;
  o.src_vocab = o.tgt_vocab = 9;
  o.d_model = 8, o.nhead = 2, o.dim_feedforward = 16, o.dropout = 0;
  o.num_encoder_layers = o.num_decoder_layers = 2;
  o.max_len = 12, o.pad_id = 0, o.positions = k;
  return o;
}

std::string names_of(const Module& m) {
  std::string out;
  for (const auto& [n, v] : m.named_parameters()) out += n + " ";
  return out;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("t5 buckets follow the definition: exact, log-spaced, capped; both directions") {
    // Default sizes (32 buckets, max_distance 128). Bidirectional: 16 per direction, exact below
    // 8, then 8 + floor(log(n/8) / log(16) * 8): n = 16, 32, 64 sit exactly on 10, 12, 14.
    auto bi = [](int64_t r) { return t5_relative_bucket(r, true, 32, 128); };
    CHECK(bi(0) == 0);
    CHECK(bi(-7) == 7);
    CHECK(bi(-8) == 8);
    CHECK(bi(-15) == 9);
    CHECK(bi(-16) == 10);
    CHECK(bi(-32) == 12);
    CHECK(bi(-64) == 14);
    CHECK(bi(-127) == 15);
    CHECK(bi(-5000) == 15);
    CHECK(bi(1) == 17);  // a later key: the second half
    CHECK(bi(16) == 26);
    CHECK(bi(5000) == 31);
    // Causal: 32 buckets for the past, exact below 16, 16 + floor(log(n/16) / log(8) * 16).
    auto causal = [](int64_t r) { return t5_relative_bucket(r, false, 32, 128); };
    CHECK(causal(3) == 0);  // the future shares bucket 0
    CHECK(causal(-15) == 15);
    CHECK(causal(-16) == 16);
    CHECK(causal(-32) == 21);
    CHECK(causal(-128) == 31);
    CHECK_THROWS_AS(t5_relative_bucket(1, true, 2, 128), Error);   // one bucket per direction
    CHECK_THROWS_AS(t5_relative_bucket(1, false, 32, 16), Error);  // max_distance in exact range
  }

  TEST_CASE("t5 bias: a decoding step's rows are the last rows of the full table") {
    Generator gen(3);
    RelativePositionBias rel(2, false, gen, 8, 10);
    const Tensor full = rel.buckets(7, 7), step = rel.buckets(2, 7);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 7; ++j) CHECK(step.at({i, j}) == full.at({5 + i, j}));
    const Tensor b = rel.forward(7, 7).value();  // (1,2,7,7) = weight[bucket, head]
    CHECK(b.shape() == Shape{1, 2, 7, 7});
    for (int64_t h = 0; h < 2; ++h)
      CHECK(b.at({0, h, 6, 1}) ==
            rel.weight.value().at({static_cast<int64_t>(full.at({6, 1})), h}));
    CHECK_THROWS_AS(rel.forward(8, 7), Error);
  }

  TEST_CASE("position names round-trip; a bad name lists the choices") {
    for (PositionKind k : kAll) CHECK(position_kind_from_name(position_kind_name(k)) == k);
    try {
      position_kind_from_name("rotary", "--positional");
      FAIL("no error");
    } catch (const UsageError& e) {
      const std::string m = e.what();
      CHECK(m.find("--positional 'rotary'") != std::string::npos);
      CHECK(m.find("none, learned, sinusoidal, rope, alibi, t5_bias") != std::string::npos);
    }
  }

  TEST_CASE("each scheme adds only its own parameters; the defaults add none") {
    Generator g1(1), g2(1), g3(1);
    // Defaults as before this option existed: sinusoidal (no table parameters), learned pos_emb.
    CHECK(names_of(Seq2SeqTransformer(tiny_seq2seq(Seq2SeqOptions{}.positions), g1)).find("pos") ==
          std::string::npos);
    CHECK(Seq2SeqOptions{}.positions == PositionKind::kSinusoidal);
    CHECK(DecoderOnlyOptions{}.positions == PositionKind::kLearned);
    CHECK(EncoderOnlyOptions{}.positions == PositionKind::kLearned);
    const std::string t5 = names_of(Seq2SeqTransformer(tiny_seq2seq(PositionKind::kT5Bias), g2));
    CHECK(t5.find("enc_rel_bias.weight") != std::string::npos);
    CHECK(t5.find("dec_rel_bias.weight") != std::string::npos);
    const std::string learned =
        names_of(Seq2SeqTransformer(tiny_seq2seq(PositionKind::kLearned), g3));
    CHECK(learned.find("src_pos.weight") != std::string::npos);
    CHECK(learned.find("rel_bias") == std::string::npos);
  }

  TEST_CASE("seq2seq: cached greedy decoding equals recomputation with every scheme") {
    const Tensor src = Tensor::from_vector({2, 5}, {3, 4, 5, 6, 7, 8, 3, 5, 0, 0});
    for (PositionKind k : kAll) {
      CAPTURE(position_kind_name(k));
      Generator gen(11);
      Seq2SeqTransformer m(tiny_seq2seq(k), gen);
      m.eval();
      const Tensor a = m.greedy_decode(src, 1, 2, 8, /*use_cache=*/true);
      const Tensor b = m.greedy_decode(src, 1, 2, 8, /*use_cache=*/false);
      CHECK(max_abs_diff(a, b) == 0);
      // decode() without caches at a later start position: the bias covers just these rows.
      NoGrad off;
      const Var memory = m.encode(src);
      const Tensor tgt = Tensor::from_vector({2, 2}, {1, 4, 1, 5});
      CHECK(m.decode(tgt, memory, src, nullptr, 3).shape() == Shape{2, 2, 9});
    }
  }

  TEST_CASE("positions make order visible; without them the encoder is permutation-equivariant") {
    // Swapping two source tokens swaps the encoder's outputs at those rows iff there are no
    // positions; every scheme breaks the symmetry.
    const Tensor ids = Tensor::from_vector({1, 4}, {3, 4, 5, 6});
    const Tensor swapped = Tensor::from_vector({1, 4}, {4, 3, 5, 6});
    for (PositionKind k : kAll) {
      CAPTURE(position_kind_name(k));
      Generator gen(5);
      EncoderOnlyOptions o;
      o.vocab_size = 9, o.max_len = 8, o.d_model = 8, o.nhead = 2, o.num_layers = 1;
      o.dim_feedforward = 16, o.dropout = 0, o.positions = k;
      EncoderOnlyTransformer enc(o, gen);
      enc.eval();
      NoGrad off;
      const Tensor a = enc.encode(ids).value(), b = enc.encode(swapped).value();
      double diff = 0;  // row 0 of a against row 1 of b: the same token at the other place
      for (int64_t c = 0; c < 8; ++c)
        diff = std::max(diff, std::abs(double(a.at({0, 0, c})) - double(b.at({0, 1, c}))));
      if (k == PositionKind::kNone)
        CHECK(diff < 1e-5);
      else
        CHECK(diff > 1e-3);
    }
  }

  TEST_CASE(
      "alibi's bias is symmetric: a bidirectional encoder cannot tell a sequence from its "
      "mirror image") {
    // -slope |i - j| is unchanged when both positions are mirrored (i -> T-1-i), so the encoder
    // of the reversed input is the reversed encoder output. An encoder-decoder whose
    // cross-attention has no positions then sees the same memory for x and reversed x, and
    // cannot learn reversal. rope and t5_bias (direction-aware buckets) break the mirror.
    const Tensor ids = Tensor::from_vector({1, 5}, {3, 4, 5, 6, 7});
    const Tensor mirrored = Tensor::from_vector({1, 5}, {7, 6, 5, 4, 3});
    for (PositionKind k : {PositionKind::kAlibi, PositionKind::kRope, PositionKind::kT5Bias}) {
      CAPTURE(position_kind_name(k));
      Generator gen(8);
      EncoderOnlyOptions o;
      o.vocab_size = 9, o.max_len = 8, o.d_model = 8, o.nhead = 2, o.num_layers = 2;
      o.dim_feedforward = 16, o.dropout = 0, o.positions = k;
      EncoderOnlyTransformer enc(o, gen);
      enc.eval();
      NoGrad off;
      const Tensor a = enc.encode(ids).value(), b = enc.encode(mirrored).value();
      double diff = 0;
      for (int64_t t = 0; t < 5; ++t)
        for (int64_t c = 0; c < 8; ++c)
          diff = std::max(diff, std::abs(double(a.at({0, t, c})) - double(b.at({0, 4 - t, c}))));
      if (k == PositionKind::kAlibi)
        CHECK(diff < 1e-5);
      else
        CHECK(diff > 1e-3);
    }
  }
}

}  // namespace attn::nn
