// Options shared by the transformer encoder and decoder layers (PyTorch's constructor arguments).
//
//   attn::nn::TransformerLayerOptions o;
//   o.d_model = 64; o.nhead = 4; o.dim_feedforward = 256;
//   o.norm_first = true;                        // pre-norm (GPT-2 and later); false = 2017
//   post-norm o.activation = attn::nn::Activation::kGELU;
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "nn/attention/additive_attention.h"
#include "nn/feedforward.h"
#include "nn/positional/rope.h"

namespace attn::nn {

struct TransformerLayerOptions {
  int64_t d_model = 512;
  int64_t nhead = 8;
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;  // on each sublayer's output, inside the FFN and on attention weights
  Activation activation = Activation::kReLU;  // relu, gelu or gelu_tanh
  double layer_norm_eps = 1e-5;
  bool norm_first = false;  // false: x = norm(x + f(x)) (2017); true: x = x + f(norm(x))
  bool bias = true;         // biases of the linear maps and layer norms (PyTorch >= 2.1's flag)
  // Ablation switches (not in PyTorch; all on = the standard block). Off, the part is not built
  // (no parameters) and the sublayers compose without it:
  //   layer_norm = false: x = x + f(x) in both placements; a stack's final norm goes too
  //   residual = false:   x = norm(f(x)) (post-norm) or x = f(norm(x)) (pre-norm)
  //   feedforward = false: no FFN sublayer (the layer is attention only, with its norm/residual)
  bool layer_norm = true;
  bool residual = true;
  bool feedforward = true;
  // Beyond PyTorch's layer: grouped-query self-attention, rotary positions in self-attention.
  int64_t n_kv_heads = 0;  // 0 = nhead
  std::optional<RopeStyle> rope;
  // How every attention of the layer scores a query against a key (additive_attention.h).
  AttentionScore score = AttentionScore::kScaledDot;
  // A row of nn::feed_forward_registry() (nn/feedforward_registry.h, e.g. a plugin's block) as
  // every layer's feed-forward block instead of linear1/act/linear2 (named feed_forward.* then);
  // "" for the built-in block of `activation`. TransformerEncoderLayer only (so DecoderOnly and
  // EncoderOnly models); the encoder-decoder's decoder layer refuses it.
  std::string feed_forward;
};

}  // namespace attn::nn
