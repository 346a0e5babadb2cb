// Counting a model's parameters by what they do: query, key, value and output projections, the
// feed-forward network, norms, embeddings, the output head.
//
//   attn::nn::TransformerEncoderLayer layer(opts, gen);
//   ComponentCounts c = count_by_component(layer);     // from layer.named_parameters()
//   c[Component::kQ];                                   // 262656 for d_model 512 (W_q and b_q)
//   c.total();                                          // == layer.num_parameters()
//   ComponentCounts f = encoder_layer_formula({.d_model = 512, .d_ff = 2048});
//   f == c;                                             // the closed form agrees
//
// PyTorch packs W_q, W_k, W_v into one in_proj_weight (3E, E) with rows [W_q; W_k; W_v]; the
// census splits it (and in_proj_bias) into its three thirds. Cross-attention counts towards
// Q, K, V and O like self-attention. A name no rule knows lands in kOther, so nothing is lost:
// total() always equals Module::num_parameters().
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "nn/module.h"

namespace attn::experiments {

enum class Component { kQ, kK, kV, kO, kFFN, kNorms, kEmbeddings, kHead, kOther };
constexpr size_t kNumComponents = 9;

// "Q", "K", "V", "O", "FFN", "norms", "embeddings", "output head", "other".
const std::string& component_name(Component c);

struct ComponentCounts {
  std::array<int64_t, kNumComponents> n{};
  int64_t& operator[](Component c) { return n[static_cast<size_t>(c)]; }
  int64_t operator[](Component c) const { return n[static_cast<size_t>(c)]; }
  int64_t total() const;
  int64_t qkv() const {
    return (*this)[Component::kQ] + (*this)[Component::kK] + (*this)[Component::kV];
  }
  int64_t attention() const { return qkv() + (*this)[Component::kO]; }
  bool operator==(const ComponentCounts&) const = default;
  ComponentCounts& operator+=(const ComponentCounts& o);
};

// Which component a parameter belongs to, from its dotted name ("layers.0.linear1.weight").
// in_proj_* names are kQ here; count_by_component splits them.
Component classify_parameter(const std::string& name);

ComponentCounts count_by_component(const nn::Module& m);

// ---- closed forms (with biases as PyTorch's layers have them by default) ----
struct StandardBlockSize {
  int64_t d_model = 512;
  int64_t d_ff = 2048;
  bool bias = true;
};
// nn.TransformerEncoderLayer: 4 projections of d^2 (+ d bias each), two FFN matrices
// (2 d d_ff + d_ff + d), two LayerNorms (2 d each).
ComponentCounts encoder_layer_formula(const StandardBlockSize& s);
// nn.TransformerDecoderLayer: the encoder layer plus cross-attention (4 more projections) and a
// third LayerNorm.
ComponentCounts decoder_layer_formula(const StandardBlockSize& s);

// The 2017 encoder-decoder (nn::Seq2SeqTransformer): the layers, the two final LayerNorms, a
// source and a target embedding table (sinusoidal positions are a buffer, not parameters) and
// the output layer (d x V + V), which tie_output replaces by the target table.
struct Seq2SeqSize {
  StandardBlockSize block;
  int64_t encoder_layers = 6, decoder_layers = 6;
  int64_t src_vocab = 37000, tgt_vocab = 37000;
  bool tie_output = true;
};
ComponentCounts seq2seq_formula(const Seq2SeqSize& s);

struct LlamaBlockSize {
  int64_t dim = 512;
  int64_t n_heads = 8;
  int64_t n_kv_heads = 8;
  int64_t hidden = 1536;
};
// No biases: W_q (d, d), W_k and W_v (n_kv_heads * d/n_heads, d), W_o (d, d), SwiGLU's three
// (hidden, d) matrices, two RMSNorm weights (d).
ComponentCounts llama_block_formula(const LlamaBlockSize& s);

}  // namespace attn::experiments
