// A SANA-style block (004 §4.2, "SANA: linear diffusion transformers"): ReLU linear attention
// followed by a Mix-FFN whose depthwise convolution gives the block its sense of position, so
// the model needs no positional encoding.
//
//   using namespace attn::nn;
//   SanaBlock sb(/*d_model=*/32, /*nhead=*/2, /*hidden=*/64, gen);
//   Var y = sb.forward(h);      // h (B,T,32) -> (B,T,32), causal; used as a MixerModel mixer
//   Var c = causal_depthwise_conv(x, w);   // x (B,T,C), w (K,C): y_t = sum_j w_j * x_{t-j}
//
//   u = out_proj(heads(linattn(relu(q), relu(k), v)))          ReLU features, causal, O(T)
//   y = u + MixFFN(LN(h + u))
//   MixFFN(z) = down( silu(g) * c ),  [g, c] = dwconv3(up(z))  (up: d -> 2 hidden, GLU halves)
// SANA's Mix-FFN is a 1x1 convolution, a 3x3 depthwise convolution over the image and a gated
// linear unit; on a sequence the 3x3 becomes a causal kernel of 3 taps per channel (x_t, x_{t-1},
// x_{t-2}), each output channel reading its own input channel only. A causal convolution tells
// position t from t-1 (their neighbourhoods differ), which an attention over a set cannot: the
// document's reason for dropping positions. In the zoo the block's model has no sinusoidal
// positions and no separate feed-forward block (the Mix-FFN replaces it); the block returns
// u + MixFFN(...), which the MixerModel block adds to its residual stream.
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/attention/projected_attention.h"
#include "nn/linear.h"
#include "nn/norms.h"

namespace attn::nn {

// Causal depthwise convolution along T: y_t = sum_{j<K} w_j * x_{t-j} (x_{t-j} = 0 before the
// start), per channel. x (B,T,C), w (K,C) -> (B,T,C).
Var causal_depthwise_conv(const Var& x, const Var& w);

class SanaBlock : public Module {
 public:
  static constexpr int64_t kTaps = 3;

  SanaBlock(int64_t d_model, int64_t nhead, int64_t hidden, Generator& gen);
  Var forward(const Var& h) const;    // (B,T,d_model) -> (B,T,d_model)
  Var attention(const Var& h) const;  // u alone, the ReLU linear attention

  std::shared_ptr<ProjectedAttention> attn;
  std::shared_ptr<LayerNorm> ffn_norm;
  std::shared_ptr<Linear> up, down;
  Var conv_weight, conv_bias;  // (kTaps, 2 hidden), (2 hidden)

 private:
  int64_t hidden_;
};

}  // namespace attn::nn
