// One transformer decoder layer (masked self-attention, cross-attention over the encoder memory,
// feed-forward), nn.TransformerDecoderLayer.
//
//   attn::nn::TransformerDecoderLayer layer(o, gen, rng);
//   attn::nn::AttentionMasks self_masks{.causal = true};
//   attn::nn::AttentionMasks memory_masks{.key_padding_mask = src_pad};
//   attn::Var y = layer.forward(tgt, memory, self_masks, memory_masks);   // tgt (B,T,d) -> (B,T,d)
//   layer.multihead_attn->last_weights();      // (B,H,T,S): which source tokens each output read
//
// Post-norm (2017):  x = norm1(x + SA(x));  x = norm2(x + CA(x, mem));  x = norm3(x + FF(x))
// Pre-norm:          x = x + SA(norm1(x));  x = x + CA(norm2(x), mem);  x = x + FF(norm3(x))
// The ablation switches (layer_norm, residual, feedforward) act as in the encoder layer.
//
// Names as PyTorch: self_attn.*, multihead_attn.*, linear1.*, linear2.*, norm1.*, norm2.*,
// norm3.*. For incremental decoding pass a DecoderLayerCache: the self-attention cache grows by
// the new positions, the cross-attention one is filled from the memory once and reused.
#pragma once

#include <memory>

#include "nn/attention/multihead_attention.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norms.h"
#include "nn/transformer/layer_options.h"

namespace attn::nn {

struct DecoderLayerCache {
  KVCache self_attn;
  KVCache cross_attn{.fixed = true};
};

class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer(const TransformerLayerOptions& options,
                          Generator& gen,
                          std::shared_ptr<Generator> dropout_gen = nullptr);

  // tgt (B,T,d_model), memory (B,S,d_model). self_masks: tgt_mask / tgt_key_padding_mask /
  // causal; memory_masks: memory_mask / memory_key_padding_mask.
  Var forward(const Var& tgt,
              const Var& memory,
              const AttentionMasks& self_masks = {},
              const AttentionMasks& memory_masks = {},
              DecoderLayerCache* cache = nullptr);

  const TransformerLayerOptions& options() const { return opt_; }

  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1;
  std::shared_ptr<Dropout> dropout;
  std::shared_ptr<Linear> linear2;
  std::shared_ptr<LayerNorm> norm1, norm2, norm3;
  std::shared_ptr<Dropout> dropout1, dropout2, dropout3;

 private:
  TransformerLayerOptions opt_;
};

}  // namespace attn::nn
