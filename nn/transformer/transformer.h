// The encoder-decoder stack of the 2017 paper, PyTorch's nn.Transformer (and its parts
// nn.TransformerEncoder / nn.TransformerDecoder).
//
//   attn::nn::TransformerOptions o;
//   o.d_model = 64; o.nhead = 4; o.num_encoder_layers = 2; o.num_decoder_layers = 2;
//   attn::nn::Transformer model(o, gen, rng);
//   attn::Var y = model.forward(src, tgt, {.key_padding_mask = src_pad},   // encoder self-attn
//                               {.causal = true},                           // decoder self-attn
//                               {.key_padding_mask = src_pad});             // cross-attn
//   // src (B,S,d), tgt (B,T,d) -> (B,T,d)
//
// Names as PyTorch: encoder.layers.N.*, encoder.norm.*, decoder.layers.N.*, decoder.norm.*, so a
// state_dict of nn.Transformer(d_model, nhead, ..., batch_first=True) loads as is. The final
// norms are there as in nn.Transformer (after a post-norm stack they are one extra LayerNorm;
// after a pre-norm stack they are what normalises the residual stream at all), unless the
// layer_norm ablation switch is off.
// Initialisation as nn.Transformer: every parameter of rank >= 2 is xavier_uniform_.
// dropout_gen: the generator of every dropout mask in the stack (nn/dropout.h); null makes one
// seeded from gen.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nn/module.h"
#include "nn/module_list.h"
#include "nn/norms.h"
#include "nn/transformer/decoder_layer.h"
#include "nn/transformer/encoder_layer.h"

namespace attn::nn {

class TransformerEncoder : public Module {
 public:
  TransformerEncoder(const TransformerLayerOptions& layer,
                     int64_t num_layers,
                     bool final_norm,
                     Generator& gen,
                     std::shared_ptr<Generator> dropout_gen = nullptr);

  // src (B,S,d) -> (B,S,d). caches: one per layer (decoder-only use), or null.
  Var forward(const Var& src,
              const AttentionMasks& masks = {},
              std::vector<KVCache>* caches = nullptr);

  std::shared_ptr<ModuleList<TransformerEncoderLayer>> layers;
  std::shared_ptr<LayerNorm> norm;  // null without final_norm
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

 private:
  std::shared_ptr<Generator> dropout_gen_;
};

class TransformerDecoder : public Module {
 public:
  TransformerDecoder(const TransformerLayerOptions& layer,
                     int64_t num_layers,
                     bool final_norm,
                     Generator& gen,
                     std::shared_ptr<Generator> dropout_gen = nullptr);

  // tgt (B,T,d), memory (B,S,d) -> (B,T,d). caches: one per layer for incremental decoding.
  Var forward(const Var& tgt,
              const Var& memory,
              const AttentionMasks& self_masks = {},
              const AttentionMasks& memory_masks = {},
              std::vector<DecoderLayerCache>* caches = nullptr);

  std::shared_ptr<ModuleList<TransformerDecoderLayer>> layers;
  std::shared_ptr<LayerNorm> norm;
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

 private:
  std::shared_ptr<Generator> dropout_gen_;
};

struct TransformerOptions : TransformerLayerOptions {
  int64_t num_encoder_layers = 6;
  int64_t num_decoder_layers = 6;
};

class Transformer : public Module {
 public:
  Transformer(const TransformerOptions& options,
              Generator& gen,
              std::shared_ptr<Generator> dropout_gen = nullptr);

  // src (B,S,d), tgt (B,T,d) -> (B,T,d). src_masks: src_mask / src_key_padding_mask;
  // tgt_masks: tgt_mask / tgt_key_padding_mask / causal; memory_masks: memory_mask /
  // memory_key_padding_mask (usually the source padding again).
  Var forward(const Var& src,
              const Var& tgt,
              const AttentionMasks& src_masks = {},
              const AttentionMasks& tgt_masks = {},
              const AttentionMasks& memory_masks = {});

  const TransformerOptions& options() const { return opt_; }
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

  std::shared_ptr<TransformerEncoder> encoder;
  std::shared_ptr<TransformerDecoder> decoder;

 private:
  TransformerOptions opt_;
  std::shared_ptr<Generator> dropout_gen_;
};

// xavier_uniform_ on every parameter of rank >= 2 (what nn.Transformer does after building).
void xavier_init_matrices(const Module& module, Generator& gen);

}  // namespace attn::nn
