// The block ablation switches of TransformerLayerOptions (layer_norm, residual, feedforward):
// each removes exactly its part, the output is the composition of what is left (recomputed
// here from the layer's own modules), and the defaults build the standard block.
#include <doctest/doctest.h>

#include <memory>

#include "autograd/functional.h"
#include "nn/transformer/decoder_layer.h"
#include "nn/transformer/encoder_layer.h"
#include "nn/transformer/seq2seq.h"

namespace attn::nn {

namespace {

TransformerLayerOptions small(bool norm_first) {
  TransformerLayerOptions o;
  o.d_model = 8, o.nhead = 2, o.dim_feedforward = 16, o.dropout = 0;
  o.norm_first = norm_first;
  return o;
}

bool has_prefix(const Module& m, const std::string& prefix) {
  for (const auto& [n, v] : m.named_parameters())
    if (n.rfind(prefix, 0) == 0) return true;
  return false;
}

void check_close(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

// The layer's sublayers, called one by one.
Var sa(TransformerEncoderLayer& l, const Var& x) {
  return l.self_attn->forward(x, x, x).out;
}
Var ff(TransformerEncoderLayer& l, const Var& x) {
  return feed_forward(x, *l.linear1, *l.linear2, l.options().activation, *l.dropout);
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("block ablation: layer_norm = false drops the norms, the output is x + f(x)") {
    for (bool norm_first : {false, true}) {
      TransformerLayerOptions o = small(norm_first);
      o.layer_norm = false;
      Generator gen(1);
      TransformerEncoderLayer l(o, gen);
      CHECK_FALSE(has_prefix(l, "norm1"));
      CHECK_FALSE(has_prefix(l, "norm2"));
      CHECK(l.named_parameters().size() == 8);  // attention 4 + linear1/linear2 4
      const Var x(Tensor::randn({2, 3, 8}, gen));
      const Var h = add(x, sa(l, x));
      check_close(l.forward(x).value(), add(h, ff(l, h)).value());
    }
  }

  TEST_CASE("block ablation: residual = false keeps only the sublayer's own path") {
    Generator gen(2);
    const Var x(Tensor::randn({2, 3, 8}, gen));
    TransformerLayerOptions post = small(false);
    post.residual = false;
    TransformerEncoderLayer lp(post, gen);
    CHECK(lp.named_parameters().size() == 12);  // nothing removed: the residual has no weights
    // post-norm: norm2(ff(norm1(sa(x))))
    const Var hp = lp.norm1->forward(sa(lp, x));
    check_close(lp.forward(x).value(), lp.norm2->forward(ff(lp, hp)).value());
    // pre-norm: ff(norm2(sa(norm1(x))))
    TransformerLayerOptions pre = small(true);
    pre.residual = false;
    TransformerEncoderLayer lq(pre, gen);
    const Var hq = sa(lq, lq.norm1->forward(x));
    check_close(lq.forward(x).value(), ff(lq, lq.norm2->forward(hq)).value());
  }

  TEST_CASE("block ablation: feedforward = false leaves attention with its residual and norm") {
    TransformerLayerOptions o = small(false);
    o.feedforward = false;
    Generator gen(3);
    TransformerEncoderLayer l(o, gen);
    CHECK(l.linear1 == nullptr);
    CHECK_FALSE(has_prefix(l, "linear"));
    CHECK_FALSE(has_prefix(l, "norm2"));
    CHECK(l.named_parameters().size() == 6);  // attention 4 + norm1 2
    const Var x(Tensor::randn({2, 3, 8}, gen));
    check_close(l.forward(x).value(), l.norm1->forward(add(x, sa(l, x))).value());

    TransformerDecoderLayer d(o, gen);
    CHECK_FALSE(has_prefix(d, "linear"));
    CHECK_FALSE(has_prefix(d, "norm3"));
    CHECK(d.named_parameters().size() == 12);  // two attentions 8 + norm1, norm2 4
  }

  TEST_CASE("block ablation: the defaults build the whole block; no layer norm drops final norms") {
    const TransformerLayerOptions o;
    CHECK(o.layer_norm);
    CHECK(o.residual);
    CHECK(o.feedforward);
    Seq2SeqOptions s;
    s.d_model = 8, s.nhead = 2, s.dim_feedforward = 16, s.src_vocab = s.tgt_vocab = 7;
    s.num_encoder_layers = s.num_decoder_layers = 1;
    Generator gen(4);
    Seq2SeqTransformer whole(s, gen);
    CHECK(has_prefix(whole, "transformer.encoder.norm."));
    s.layer_norm = false;
    Seq2SeqTransformer bare(s, gen);
    CHECK_FALSE(has_prefix(bare, "transformer.encoder.norm."));
    CHECK_FALSE(has_prefix(bare, "transformer.decoder.norm."));
    CHECK_FALSE(has_prefix(bare, "transformer.decoder.layers.0.norm"));
    Tensor src({1, 4}), tgt({1, 3});
    for (int64_t i = 0; i < 4; ++i) src[i] = static_cast<real>(3 + i % 3);
    for (int64_t i = 0; i < 3; ++i) tgt[i] = static_cast<real>(1 + i);
    CHECK(bare.forward(src, tgt).shape() == Shape{1, 3, 7});
  }
}

}  // namespace attn::nn
