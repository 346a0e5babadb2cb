// One transformer encoder layer (self-attention + feed-forward), nn.TransformerEncoderLayer.
//
//   auto rng = std::make_shared<attn::Generator>(1);   // the model's dropout generator
//   attn::nn::TransformerLayerOptions o;  o.d_model = 64; o.nhead = 4; o.dim_feedforward = 256;
//   attn::nn::TransformerEncoderLayer layer(o, gen, rng);
//   attn::Var y = layer.forward(x, {.key_padding_mask = pad});   // x (B,T,64) -> (B,T,64)
//   layer.self_attn->last_weights();                             // (B,4,T,T) for a heatmap
//
// Post-norm (2017, norm_first = false):   x = norm1(x + SA(x));   x = norm2(x + FF(x))
// Pre-norm  (norm_first = true):          x = x + SA(norm1(x));   x = x + FF(norm2(x))
// Pre-norm leaves an identity path from input to output through every layer, which is why deep
// stacks train without warm-up; post-norm normalises after each residual sum.
// The ablation switches of TransformerLayerOptions (layer_norm, residual, feedforward) drop a
// part: its modules are then null and absent from named_parameters() (sublayer() below).
//
// Parameter names are PyTorch's: self_attn.{in_proj_weight, in_proj_bias, out_proj.*},
// linear1.*, linear2.*, norm1.*, norm2.* — a state_dict of nn.TransformerEncoderLayer(d_model,
// nhead, dim_feedforward, activation="relu"|"gelu", norm_first=..., batch_first=True) loads as is.
// With options.feed_forward naming a registered block, that block (layers.N.feed_forward.*)
// replaces linear1/activation/linear2, built where they would be from the same generator.
// With a KV cache and a causal mask the same layer is a GPT block decoding one token at a time.
#pragma once

#include <functional>
#include <memory>

#include "nn/attention/multihead_attention.h"
#include "nn/dropout.h"
#include "nn/feedforward_registry.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norms.h"
#include "nn/transformer/layer_options.h"

namespace attn::nn {

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(const TransformerLayerOptions& options,
                          Generator& gen,
                          std::shared_ptr<Generator> dropout_gen = nullptr);

  // src (B,T,d_model); masks as PyTorch's src_mask / src_key_padding_mask (1 = not allowed).
  Var forward(const Var& src, const AttentionMasks& masks = {}, KVCache* cache = nullptr);

  const TransformerLayerOptions& options() const { return opt_; }

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  // options.feed_forward's block (then linear1, dropout and linear2 are null), or null.
  std::shared_ptr<FeedForwardBlock> feed_forward;
  std::shared_ptr<LayerNorm> norm1, norm2;
  std::shared_ptr<Dropout> dropout1, dropout2;

 private:
  TransformerLayerOptions opt_;
};

// Shared by the encoder and decoder layers: the self-attention options a layer config implies,
// and a check that the layer config is usable (a message naming `layer` otherwise).
MultiheadAttentionOptions self_attention_options(const TransformerLayerOptions& o);
void check_layer_options(const TransformerLayerOptions& o, const char* layer);

// One sublayer f with its residual connection and layer norm, as the options place them:
//   post-norm  norm(x + f(x))      pre-norm  x + f(norm(x))
// with the residual term dropped when o.residual is false and the norm skipped when `norm` is
// null (o.layer_norm false). Shared by the encoder and decoder layers.
Var sublayer(const Var& x,
             const std::function<Var(const Var&)>& f,
             const LayerNorm* norm,
             const TransformerLayerOptions& o);

}  // namespace attn::nn
