// Additive (Bahdanau) attention: the scores against the formula written as loops, masks, rows
// summing to 1, the layer's parameter and its checks, and the layer inside a seq2seq model
// (cached decoding equals recomputation).
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/additive_attention.h"
#include "nn/attention/multihead_attention.h"
#include "nn/transformer/seq2seq.h"

namespace attn::nn {

TEST_SUITE("nn") {
  TEST_CASE("additive_scores: s[b,h,i,j] = sum_d w[h,d] tanh(q[b,h,i,d] + k[b,h,j,d])") {
    Generator gen(3);
    const Tensor q = Tensor::randn({2, 3, 4, 5}, gen), k = Tensor::randn({2, 3, 6, 5}, gen),
                 w = Tensor::randn({3, 5}, gen);
    const Tensor s = additive_scores(Var(q), Var(k), Var(w)).value();
    REQUIRE(s.shape() == Shape{2, 3, 4, 6});
    double worst = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 6; ++j) {
            double expect = 0;
            for (int64_t d = 0; d < 5; ++d)
              expect += w.at({h, d}) * std::tanh(double(q.at({b, h, i, d})) + k.at({b, h, j, d}));
            worst = std::max(worst, std::abs(expect - s.at({b, h, i, j})));
          }
    CHECK(worst < 1e-5);  // five float products of size <= |w|
    CHECK_THROWS_AS(additive_scores(Var(q), Var(k), Var(Tensor::randn({2, 5}, gen))), Error);
  }

  TEST_CASE("additive attention: rows sum to 1, hidden keys get weight exactly 0") {
    Generator gen(4);
    Var q = Var::parameter(Tensor::randn({2, 2, 3, 4}, gen)),
        k = Var::parameter(Tensor::randn({2, 2, 5, 4}, gen)),
        v = Var::parameter(Tensor::randn({2, 2, 5, 4}, gen)),
        w = Var::parameter(Tensor::randn({2, 4}, gen));
    SdpaOptions opt;
    opt.masks.key_padding_mask = Tensor::from_vector({2, 5}, {0, 0, 0, 0, 1, 0, 0, 1, 1, 1});
    opt.masks.causal = true;  // the queries are the last 3 of 5 positions: i sees j <= i + 2
    const AttentionOutput a = additive_attention(q, k, v, w, opt);
    const Tensor p = a.weights.value();
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 3; ++i) {
          double total = 0;
          for (int64_t j = 0; j < 5; ++j) {
            total += p.at({b, h, i, j});
            const bool hidden = j > i + 2 || (b == 0 && j == 4) || (b == 1 && j >= 2);
            if (hidden)
              CHECK(p.at({b, h, i, j}) == 0);
            else
              CHECK(p.at({b, h, i, j}) > 0);
          }
          CHECK(total == doctest::Approx(1.0));
        }
    // A hidden key's value does not reach the output, and its key gets no gradient.
    sum(a.out).backward();
    for (int64_t d = 0; d < 4; ++d) CHECK(k.grad().at({0, 0, 4, d}) == 0);
    CHECK(v.grad().at({1, 1, 3, 0}) == 0);
    CHECK(max_abs_diff(w.grad(), Tensor::zeros({2, 4})) > 0);
  }

  TEST_CASE("MultiheadAttention with additive scores: its parameter, the weights, the checks") {
    Generator gen(5);
    MultiheadAttentionOptions o;
    o.score = AttentionScore::kAdditive;
    MultiheadAttention mha(8, 2, gen, o);
    int found = 0;
    for (const auto& [name, p] : mha.named_parameters())
      if (name == "additive_v") {
        found += 1;
        CHECK(p.shape() == Shape{2, 4});
      }
    CHECK(found == 1);
    CHECK(mha.additive_v.shape() == Shape{2, 4});
    const Var x(Tensor::randn({2, 4, 8}, gen));
    const AttentionOutput a = mha.forward(x, x, x, {.causal = true});
    CHECK(a.out.shape() == Shape{2, 4, 8});
    const Tensor& p = mha.last_weights();
    CHECK(p.at({1, 1, 0, 1}) == 0);  // causal: query 0 never sees key 1
    CHECK(p.at({0, 0, 3, 0}) + p.at({0, 0, 3, 1}) + p.at({0, 0, 3, 2}) + p.at({0, 0, 3, 3}) ==
          doctest::Approx(1.0));
    o.n_kv_heads = 1;  // one w per head needs one key head per query head
    CHECK_THROWS_AS(MultiheadAttention(8, 2, gen, o), Error);
    CHECK(attention_score_from_name("additive", "--score") == AttentionScore::kAdditive);
    CHECK(std::string(attention_score_name(AttentionScore::kScaledDot)) == "dot");
    CHECK_THROWS_AS(attention_score_from_name("concat", "--score"), UsageError);
  }

  TEST_CASE("seq2seq with additive scores: cached greedy decoding equals recomputation") {
    Generator gen(6);
    Seq2SeqOptions o;
    o.d_model = 16, o.nhead = 2, o.dim_feedforward = 32, o.dropout = 0;
    o.num_encoder_layers = o.num_decoder_layers = 1;
    o.score = AttentionScore::kAdditive;
    o.src_vocab = 9, o.tgt_vocab = 10, o.max_len = 32, o.pad_id = 0;
    Seq2SeqTransformer model(o, gen);
    CHECK((*model.transformer->decoder->layers)[0].multihead_attn->options().score ==
          AttentionScore::kAdditive);
    model.eval();
    const Tensor src = Tensor::from_vector({2, 5}, {3, 4, 5, 6, 7, 8, 2, 5, 0, 0});
    const Tensor a = model.greedy_decode(src, 1, 2, 10);
    const Tensor b = model.greedy_decode(src, 1, 2, 10, false);
    CHECK(a.shape() == b.shape());
    CHECK(max_abs_diff(a, b) == 0);
  }
}

}  // namespace attn::nn
