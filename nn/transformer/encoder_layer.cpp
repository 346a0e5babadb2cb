#include "nn/transformer/encoder_layer.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

MultiheadAttentionOptions self_attention_options(const TransformerLayerOptions& o) {
  MultiheadAttentionOptions a;
  a.n_kv_heads = o.n_kv_heads;
  a.bias = o.bias;
  a.dropout = o.dropout;
  a.rope = o.rope;
  a.score = o.score;
  return a;
}

void check_layer_options(const TransformerLayerOptions& o, const char* layer) {
  if (o.activation == Activation::kSwiGLU)
    throw Error(
        fmt::format("{}: activation must be relu, gelu or gelu_tanh (a SwiGLU block is "
                    "FeedForward with Activation::kSwiGLU, as in the llama block)",
                    layer));
  if (o.d_model <= 0 || o.nhead <= 0 || o.dim_feedforward <= 0)
    throw Error(fmt::format("{}: d_model, nhead and dim_feedforward must be positive", layer));
}

Var sublayer(const Var& x,
             const std::function<Var(const Var&)>& f,
             const LayerNorm* norm,
             const TransformerLayerOptions& o) {
  auto normed = [norm](const Var& v) { return norm ? norm->forward(v) : v; };
  if (o.norm_first) {
    const Var y = f(normed(x));
    return o.residual ? add(x, y) : y;
  }
  const Var y = f(x);
  return normed(o.residual ? add(x, y) : y);
}

TransformerEncoderLayer::TransformerEncoderLayer(const TransformerLayerOptions& o,
                                                 Generator& gen,
                                                 std::shared_ptr<Generator> dropout_gen)
    : Module("TransformerEncoderLayer"), opt_(o) {
  check_layer_options(o, "TransformerEncoderLayer");
  // Registration order = PyTorch's, so named_parameters() lists the same names in the same order.
  self_attn = register_module(
      "self_attn", std::make_shared<MultiheadAttention>(o.d_model, o.nhead, gen,
                                                        self_attention_options(o), dropout_gen));
  if (o.feedforward && !o.feed_forward.empty()) {
    feed_forward = register_module(
        "feed_forward", make_feed_forward(o.feed_forward, o.d_model, o.dim_feedforward, gen));
  } else if (o.feedforward) {
    linear1 = register_module("linear1",
                              std::make_shared<Linear>(o.d_model, o.dim_feedforward, o.bias, gen));
    dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout, dropout_gen));
    linear2 = register_module("linear2",
                              std::make_shared<Linear>(o.dim_feedforward, o.d_model, o.bias, gen));
  }
  auto norm = [&] {
    return std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps, true, o.bias);
  };
  if (o.layer_norm) {
    norm1 = register_module("norm1", norm());
    if (o.feedforward) norm2 = register_module("norm2", norm());
  }
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(o.dropout, dropout_gen));
  if (o.feedforward)
    dropout2 = register_module("dropout2", std::make_shared<Dropout>(o.dropout, dropout_gen));
}

Var TransformerEncoderLayer::forward(const Var& src, const AttentionMasks& masks, KVCache* cache) {
  auto sa = [&](const Var& x) {
    return dropout1->forward(self_attn->forward(x, x, x, masks, cache).out);
  };
  auto ff = [&](const Var& x) {
    if (feed_forward) return dropout2->forward(feed_forward->forward(x));
    return dropout2->forward(nn::feed_forward(x, *linear1, *linear2, opt_.activation, *dropout));
  };
  Var x = sublayer(src, sa, norm1.get(), opt_);
  return opt_.feedforward ? sublayer(x, ff, norm2.get(), opt_) : x;
}

}  // namespace attn::nn
