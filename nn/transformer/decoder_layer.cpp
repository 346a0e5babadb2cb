#include "nn/transformer/decoder_layer.h"

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/transformer/encoder_layer.h"

namespace attn::nn {

TransformerDecoderLayer::TransformerDecoderLayer(const TransformerLayerOptions& o,
                                                 Generator& gen,
                                                 std::shared_ptr<Generator> dropout_gen)
    : Module("TransformerDecoderLayer"), opt_(o) {
  check_layer_options(o, "TransformerDecoderLayer");
  if (!o.feed_forward.empty())
    throw Error("TransformerDecoderLayer: feed_forward '" + o.feed_forward +
                "' is for TransformerEncoderLayer (decoder-only and encoder-only models); this "
                "layer builds its own linear1/linear2");
  const MultiheadAttentionOptions sa = self_attention_options(o);
  MultiheadAttentionOptions ca = sa;
  ca.rope.reset();  // memory positions are not the target's: no rotation across the two
  auto norm = [&] {
    return std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps, true, o.bias);
  };
  auto drop = [&] { return std::make_shared<Dropout>(o.dropout, dropout_gen); };
  self_attn = register_module(
      "self_attn", std::make_shared<MultiheadAttention>(o.d_model, o.nhead, gen, sa, dropout_gen));
  multihead_attn = register_module("multihead_attn", std::make_shared<MultiheadAttention>(
                                                         o.d_model, o.nhead, gen, ca, dropout_gen));
  if (o.feedforward) {
    linear1 = register_module("linear1",
                              std::make_shared<Linear>(o.d_model, o.dim_feedforward, o.bias, gen));
    dropout = register_module("dropout", drop());
    linear2 = register_module("linear2",
                              std::make_shared<Linear>(o.dim_feedforward, o.d_model, o.bias, gen));
  }
  if (o.layer_norm) {
    norm1 = register_module("norm1", norm());
    norm2 = register_module("norm2", norm());
    if (o.feedforward) norm3 = register_module("norm3", norm());
  }
  dropout1 = register_module("dropout1", drop());
  dropout2 = register_module("dropout2", drop());
  if (o.feedforward) dropout3 = register_module("dropout3", drop());
}

Var TransformerDecoderLayer::forward(const Var& tgt,
                                     const Var& memory,
                                     const AttentionMasks& self_masks,
                                     const AttentionMasks& memory_masks,
                                     DecoderLayerCache* cache) {
  auto sa = [&](const Var& x) {
    return dropout1->forward(
        self_attn->forward(x, x, x, self_masks, cache ? &cache->self_attn : nullptr).out);
  };
  auto ca = [&](const Var& x) {
    return dropout2->forward(
        multihead_attn
            ->forward(x, memory, memory, memory_masks, cache ? &cache->cross_attn : nullptr)
            .out);
  };
  auto ff = [&](const Var& x) {
    return dropout3->forward(feed_forward(x, *linear1, *linear2, opt_.activation, *dropout));
  };
  Var x = sublayer(tgt, sa, norm1.get(), opt_);
  x = sublayer(x, ca, norm2.get(), opt_);
  return opt_.feedforward ? sublayer(x, ff, norm3.get(), opt_) : x;
}

}  // namespace attn::nn
