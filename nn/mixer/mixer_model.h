// A small pre-norm sequence model with a pluggable token mixer: the one body in which
// selective-ssm, triangle-tradeoff and attention-zoo compare softmax attention with its
// replacements, at equal width, depth, feed-forward block and read-out, and in which
// `attnlab train --model mixer --mixer NAME` trains any mixer of nn/mixer/mixer_registry.h.
//
//   MixerModel m({.vocab = 12, .max_len = 256, .d_model = 32, .layers = 2, .classes = 10},
//                [&](int64_t layer, Generator& g) { return softmax_mixer(32, 2, true, g); }, gen);
//   Var logits = m.forward(ids);              // ids (B,T) as reals -> (B,classes), read at t = T-1
//   Var all = m.forward_positions(ids);       // (B,T,classes): one prediction per position
//
//   x = tok(ids) (+ PE[0:T], sinusoidal, when positions)
//   per layer l:  x = x + mixer_l(LN(x)),  x = x + FF(LN(x))      (FF: d -> ff_mult d -> d, GELU)
//   logits_t = head(LN(x_t))
//
// The mixer is the only part that differs between the models of an experiment. It maps
// (B,T,d_model) -> (B,T,d_model); a causal mixer lets position t read positions <= t only, so the
// read-out at the last position sees the whole input either way. The factory is called once
// per layer with the layer's index, so a hybrid stack (say, linear attention in 7 of every 8
// layers and softmax in the 8th) is one factory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "autograd/var.h"
#include "nn/embedding.h"
#include "nn/feedforward.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/module_list.h"
#include "nn/norms.h"
#include "nn/positional/sinusoidal.h"

namespace attn::nn {

// A token mixer: the module that owns its parameters (registered in the model under
// "layers.<l>.mixer") and the function that applies it, x (B,T,d_model) -> (B,T,d_model).
struct Mixer {
  std::shared_ptr<Module> module;
  std::function<Var(const Var&)> forward;
};
using MixerFactory = std::function<Mixer(int64_t layer, Generator& gen)>;

// The three mixers every comparison needs (causal = position t reads positions <= t only):
//   softmax: MultiheadAttention (separate q/k/v/out projections), O(T^2)
//   linear:  LinearAttention, phi = elu + 1, O(T), a fixed-size state when causal
//   window:  SlidingWindowAttention, |i - j| <= window (causal: 0 <= i - j <= window), O(T w)
Mixer softmax_mixer(int64_t d_model, int64_t nhead, bool causal, Generator& gen);
Mixer linear_mixer(int64_t d_model, int64_t nhead, bool causal, Generator& gen);
Mixer window_mixer(int64_t d_model, int64_t nhead, int64_t window, bool causal, Generator& gen);

struct MixerModelOptions {
  int64_t vocab = 0, max_len = 0, d_model = 32, layers = 2, classes = 2;
  int64_t ff_mult = 2;    // feed-forward width = ff_mult * d_model; 0 = no feed-forward block
  bool positions = true;  // add sinusoidal positions (no parameters) to the token embeddings
};

// One block: x + mixer(LN(x)), then x + FF(LN(x)).
class MixerBlock final : public Module {
 public:
  MixerBlock(const MixerModelOptions& o, Mixer mixer, Generator& gen);
  Var forward(const Var& x) const;  // (B,T,d_model) -> (B,T,d_model)

 private:
  Mixer mixer_;
  std::shared_ptr<LayerNorm> mixer_norm_, ff_norm_;
  std::shared_ptr<FeedForward> ff_;  // null when ff_mult == 0
};

class MixerModel final : public Module {
 public:
  MixerModel(const MixerModelOptions& o, const MixerFactory& make_mixer, Generator& gen);

  Var forward_positions(const Tensor& ids) const;  // ids (B,T), T <= max_len -> (B,T,classes)
  Var forward(const Tensor& ids) const;            // -> (B,classes), the last position's logits

  const MixerModelOptions& options() const { return o_; }

 private:
  Var hidden(const Tensor& ids) const;  // (B,T,d_model) after the final norm

  MixerModelOptions o_;
  std::shared_ptr<Embedding> tok_;
  std::shared_ptr<SinusoidalPositionalEncoding> pos_;  // null without positions
  std::shared_ptr<ModuleList<MixerBlock>> layers_;
  std::shared_ptr<LayerNorm> final_norm_;
  std::shared_ptr<Linear> head_;
};

}  // namespace attn::nn
