// A GPT-style language model: token + learned positions, a stack of pre-norm causal blocks, a
// final LayerNorm and a linear map to vocabulary logits; `generate` decodes with a KV cache.
//
//   attn::nn::DecoderOnlyOptions o;
//   o.vocab_size = 65; o.max_len = 128; o.d_model = 64; o.nhead = 4; o.num_layers = 2;
//   attn::nn::DecoderOnlyTransformer gpt(o, gen);
//   attn::Var logits = gpt.forward(ids);                // ids (B,T) -> (B,T,65), causal
//   loss = attn::cross_entropy(logits, next_ids);
//   gpt.eval();
//   attn::nn::SamplingOptions s;  s.temperature = 0.8;  s.top_k = 10;
//   attn::Tensor out = gpt.generate(prompt, /*max_new_tokens=*/50, s, gen);   // (B, T0 + 50)
//
// Block (pre-norm, GPT-2): x = x + SA(LN1(x)) with a causal mask; x = x + FF(LN2(x)). Each block
// is a TransformerEncoderLayer with norm_first = true and a causal mask, so its names are
// PyTorch's (layers.N.self_attn.in_proj_weight, layers.N.linear1.weight, layers.N.norm1.weight,
// ...). Model names: tok_emb.weight, pos_emb.weight (learned positions only), rel_bias.weight
// (t5_bias only: one table shared by every block, as in T5), layers.N.*,
// norm.{weight,bias}, lm_head.weight (only when tie_weights is false: tied logits reuse
// tok_emb.weight, so the matrix exists once and the optimizer sees it once).
//
// Generation: the prompt runs once through every block, filling one KV cache per block; each new
// token then costs one position per block instead of the whole prefix (tests check both paths
// give the same tokens). Init: embeddings N(0, init_std^2) with GPT-2's 0.02, everything else
// PyTorch's layer defaults.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
#include "nn/transformer/sampling.h"

namespace attn::nn {

// The block options (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, bias,
// n_kv_heads for GQA/MQA, norm_first, the ablation switches, feed_forward: a registered block
// such as a plugin's in place of the GELU block) with GPT-like defaults, plus the model's own.
struct DecoderOnlyOptions : TransformerLayerOptions {
  DecoderOnlyOptions() {
    d_model = 128, nhead = 4, dim_feedforward = 512;
    activation = Activation::kGELU;
    norm_first = true;  // GPT-2's pre-norm blocks
  }
  int64_t vocab_size = 0;
  int64_t max_len = 256;  // context length (the learned position table's size)
  int64_t num_layers = 4;
  // learned (GPT-2) or any other scheme of nn/positional/position_kind.h. sinusoidal, like
  // learned, is bounded by max_len; rope, alibi, t5_bias and none work at any length.
  PositionKind positions = PositionKind::kLearned;
  RopeStyle rope_style = RopeStyle::kRotateHalf;  // with PositionKind::kRope
  // A row of nn::score_bias_registry() (nn/positional/score_bias_registry.h, e.g. a plugin's
  // positional scheme): its fixed bias is added to every block's scores, on top of `positions`
  // (use PositionKind::kNone for the row alone). "" for none.
  std::string score_bias;
  // > 0: sliding-window attention (Mistral): each query sees itself and the attention_window
  // keys before it, in every block, so L blocks see L * attention_window tokens back. 0: the
  // whole prefix (GPT).
  int64_t attention_window = 0;
  bool tie_weights = true;
  double init_std = 0.02;
  // false: no causal mask, every position sees the whole input (a two-sided model trained as
  // an LM: causal-mask shows what it learns and why it cannot generate). It takes no KV cache
  // (its earlier positions change as tokens arrive) and no attention_window.
  bool causal = true;
};

class DecoderOnlyTransformer : public Module {
 public:
  DecoderOnlyTransformer(const DecoderOnlyOptions& options,
                         Generator& gen,
                         std::shared_ptr<Generator> dropout_gen = nullptr);

  // ids (B,T) -> logits (B,T,vocab). With caches (make_caches()), ids are the next tokens after
  // the cached ones (positions continue from the caches' length).
  Var forward(const Tensor& ids, std::vector<KVCache>* caches = nullptr);

  std::vector<KVCache> make_caches() const { return std::vector<KVCache>(layers->size()); }

  // prompt (B,T0) -> (B, T0 + n) with n <= max_new_tokens: sampling per `sampling` (greedy by
  // default) from gen; rows stop at eos (then filled with eos) and generation stops when all
  // have. Runs under NoGrad; call eval() first so dropout is off.
  Tensor generate(const Tensor& prompt,
                  int64_t max_new_tokens,
                  const SamplingOptions& sampling,
                  Generator& gen,
                  std::optional<int64_t> eos = std::nullopt,
                  bool use_cache = true);

  const DecoderOnlyOptions& options() const { return opt_; }
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

  std::shared_ptr<Embedding> tok_emb;
  std::shared_ptr<LearnedPositionalEmbedding> pos_emb;  // null unless learned positions
  std::shared_ptr<RelativePositionBias> rel_bias;       // null unless t5_bias (causal buckets)
  std::shared_ptr<Dropout> drop;
  std::shared_ptr<ModuleList<TransformerEncoderLayer>> layers;
  std::shared_ptr<LayerNorm> norm;  // the final norm (null with layer_norm = false)
  std::shared_ptr<Linear> lm_head;  // null when tied

 private:
  DecoderOnlyOptions opt_;
  std::shared_ptr<Generator> dropout_gen_;
  Tensor pe_;  // (max_len, d_model) with sinusoidal positions; fixed, not in the state dict
  std::function<Tensor(int64_t tq, int64_t tk)> extra_bias_;  // options.score_bias's table, or none
};

// The ids of one row each, sampled from the last position of logits (B,T,V).
std::vector<int64_t> pick_last(const Tensor& logits, const SamplingOptions& s, Generator& gen);

}  // namespace attn::nn
