// A BERT-style encoder: token + learned positions, LayerNorm, a stack of post-norm
// bidirectional encoder layers, and a masked-language-model head.
//
//   attn::nn::EncoderOnlyOptions o;
//   o.vocab_size = 100; o.pad_id = 0; o.d_model = 64; o.nhead = 4; o.num_layers = 2;
//   attn::nn::EncoderOnlyTransformer bert(o, gen);
//   attn::Var h = bert.encode(ids);                 // ids (B,T) -> (B,T,64), every token sees all
//   attn::Var logits = bert.forward(ids);           // (B,T,100): the MLM head on h
//   loss = attn::cross_entropy(logits, targets, /*ignore_index=*/-100);  // only masked positions
//
// No causal mask: each position sees the whole (unpadded) sentence, which is why the training
// task hides tokens ([MASK]) and asks for them back instead of predicting the next one.
// MLM head (BERT): logits = LN(gelu(dense(h))) W^T + bias, W = tok_emb.weight when tied.
//
// Names: tok_emb.weight, pos_emb.weight (learned positions only), rel_bias.weight (t5_bias
// only), emb_norm.{weight,bias}, layers.N.* (PyTorch's
// TransformerEncoderLayer names), mlm_head.dense.*, mlm_head.norm.*, mlm_head.bias,
// mlm_head.decoder.weight (only when untied). Init: embeddings N(0, 0.02^2) as BERT, the rest
// PyTorch's layer defaults; layer_norm_eps 1e-12 as BERT.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/module_list.h"
#include "nn/norms.h"
#include "nn/positional/learned.h"
#include "nn/positional/position_kind.h"
#include "nn/positional/t5_bias.h"
#include "nn/transformer/encoder_layer.h"

namespace attn::nn {

// The block options with BERT-like defaults (post-norm, GELU, layer_norm_eps 1e-12), plus the
// model's own.
struct EncoderOnlyOptions : TransformerLayerOptions {
  EncoderOnlyOptions() {
    d_model = 128, nhead = 4, dim_feedforward = 512;
    activation = Activation::kGELU;
    layer_norm_eps = 1e-12;
  }
  int64_t vocab_size = 0;
  int64_t max_len = 512;
  int64_t num_layers = 4;
  std::optional<int64_t> pad_id;  // padded keys are hidden; the padding row gets no gradient
  // learned (BERT) or any scheme of nn/positional/position_kind.h (t5_bias: bidirectional
  // buckets, one table shared by every layer).
  PositionKind positions = PositionKind::kLearned;
  RopeStyle rope_style = RopeStyle::kRotateHalf;  // with PositionKind::kRope
  bool tie_weights = true;
  double init_std = 0.02;
};

// The masked-language-model head: h (B,T,d) -> logits (B,T,V).
class MlmHead : public Module {
 public:
  MlmHead(int64_t d_model, int64_t vocab_size, double eps, bool tied, Generator& gen);
  // tied_weight: (V, d) used when the head was built tied (the token embedding matrix).
  Var forward(const Var& h, const Var& tied_weight) const;

  std::shared_ptr<Linear> dense;
  std::shared_ptr<LayerNorm> norm;
  std::shared_ptr<Linear> decoder;  // null when tied
  Var bias;                         // (V)
};

class EncoderOnlyTransformer : public Module {
 public:
  EncoderOnlyTransformer(const EncoderOnlyOptions& options,
                         Generator& gen,
                         std::shared_ptr<Generator> dropout_gen = nullptr);

  // ids (B,T) -> hidden states (B,T,d). key_padding_mask (B,T), 1 = padding; derived from pad_id
  // when not given.
  Var encode(const Tensor& ids, const std::optional<Tensor>& key_padding_mask = std::nullopt);
  // ids (B,T) -> MLM logits (B,T,V).
  Var forward(const Tensor& ids, const std::optional<Tensor>& key_padding_mask = std::nullopt);

  const EncoderOnlyOptions& options() const { return opt_; }
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

  std::shared_ptr<Embedding> tok_emb;
  std::shared_ptr<LearnedPositionalEmbedding> pos_emb;  // null unless learned positions
  std::shared_ptr<RelativePositionBias> rel_bias;       // null unless t5_bias
  std::shared_ptr<LayerNorm> emb_norm;
  std::shared_ptr<Dropout> drop;
  std::shared_ptr<ModuleList<TransformerEncoderLayer>> layers;
  std::shared_ptr<MlmHead> mlm_head;

 private:
  EncoderOnlyOptions opt_;
  std::shared_ptr<Generator> dropout_gen_;
  Tensor pe_;  // (max_len, d_model) with sinusoidal positions; fixed, not in the state dict
};

}  // namespace attn::nn
