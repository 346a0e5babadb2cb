// sparse-challenge's model: a small pre-norm transformer encoder that classifies a whole
// sequence, with either full (dense) or sliding-window (banded) self-attention.
//
//   LongRangeClassifier m({.vocab = 12, .max_len = 1024, .window = 16, .banded = true}, gen);
//   Var logits = m.forward(ids);   // ids (B,T) token ids as reals -> logits (B,2)
//
//   x = tok(ids) + PE[0:T]                               (sinusoidal positions, no parameters)
//   per layer:  x = x + attn(LN(x)),  x = x + FF(LN(x))  (FF: d -> 2d -> d, GELU)
//   logits = head(mean_t LN(x_t))                        (mean pooling: every position counts)
//
// attn is nn::MultiheadAttention (dense: every token sees all T, the fused O(T^2) kernel on the
// fast path) or nn::SlidingWindowAttention (banded: token i sees |i - j| <= window; on the fast
// path the O(T window) banded_attention op), optionally with global tokens and r random links
// per query (BigBird; then O(T (window + g + r))). Same parameter names and counts either way.
// Or, with .mixer set, a token mixer of nn/mixer/mixer_registry.h (a student's plugin row),
// built per layer for the shape {d_model, nhead, max_len, layers, window}.
// Mean pooling instead of a [CLS] slot: with a window a [CLS] token would see only its
// neighbours, while the mean reads all positions, so a task fails only if no single position can
// see the evidence it needs (after L layers position p has seen [p - L window, p + L window]).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "autograd/functional.h"
#include "nn/attention/multihead_attention.h"
#include "nn/attention/sliding_window.h"
#include "nn/embedding.h"
#include "nn/feedforward.h"
#include "nn/linear.h"
#include "nn/mixer/mixer_registry.h"
#include "nn/module_list.h"
#include "nn/norms.h"
#include "nn/positional/sinusoidal.h"

namespace attn::experiments {

struct LongRangeClassifierOptions {
  int64_t vocab = 0, max_len = 0, d_model = 32, nhead = 2, layers = 2, window = 16;
  bool banded = false;  // false: full attention
  // banded only: global token positions (Longformer), which see and are seen by every position.
  std::vector<int64_t> global_tokens = {};
  // banded only: random keys per query (BigBird, autograd/random_links.h); layer l draws its
  // links from random_seed + l, so the layers link different pairs.
  int64_t random_links = 0;
  uint64_t random_seed = 0;
  // When set, attn is this mixer (a registry row's make) instead; banded and what follows it
  // are then ignored.
  std::function<nn::Mixer(const nn::MixerShape&, int64_t layer, Generator&)> mixer = {};
};

// One pre-norm layer: x + attn(LN(x)), then + FF(LN(x)).
class LongRangeBlock final : public nn::Module {
 public:
  LongRangeBlock(const LongRangeClassifierOptions& o, int64_t layer, Generator& gen)
      : Module("LongRangeBlock") {
    const int64_t d = o.d_model;
    attn_norm_ = register_module("attn_norm", std::make_shared<nn::LayerNorm>(d));
    if (o.mixer) {
      mixer_ = o.mixer({.d_model = d,
                        .nhead = o.nhead,
                        .max_len = o.max_len,
                        .layers = o.layers,
                        .window = o.window},
                       layer, gen);
      register_module("attn", mixer_.module);
    } else if (o.banded)
      banded_ = register_module(
          "attn", std::make_shared<nn::SlidingWindowAttention>(
                      d, o.nhead, o.window, gen, /*causal=*/false, o.global_tokens, /*bias=*/true,
                      o.random_links, o.random_seed + static_cast<uint64_t>(layer)));
    else
      dense_ = register_module(
          "attn",
          std::make_shared<nn::MultiheadAttention>(
              d, o.nhead, gen, nn::MultiheadAttentionOptions{.separate_projections = true}));
    ff_norm_ = register_module("ff_norm", std::make_shared<nn::LayerNorm>(d));
    ff_ = register_module("ff",
                          std::make_shared<nn::FeedForward>(d, 2 * d, nn::Activation::kGELU, gen));
  }

  Var forward(const Var& x) {  // (B,T,d_model) -> (B,T,d_model)
    const Var h = attn_norm_->forward(x);
    const Var a = mixer_.forward ? mixer_.forward(h)
                  : banded_      ? banded_->forward(h).out
                                 : dense_->forward(h, h, h).out;
    const Var y = add(x, a);
    return add(y, ff_->forward(ff_norm_->forward(y)));
  }

 private:
  std::shared_ptr<nn::LayerNorm> attn_norm_, ff_norm_;
  nn::Mixer mixer_;                                     // set when o.mixer
  std::shared_ptr<nn::MultiheadAttention> dense_;       // set when !banded
  std::shared_ptr<nn::SlidingWindowAttention> banded_;  // set when banded
  std::shared_ptr<nn::FeedForward> ff_;
};

class LongRangeClassifier final : public nn::Module {
 public:
  LongRangeClassifier(const LongRangeClassifierOptions& o, Generator& gen)
      : Module(o.mixer    ? "MixerLongRangeClassifier"
               : o.banded ? "BandedLongRangeClassifier"
                          : "DenseLongRangeClassifier") {
    tok_ = register_module("tok", std::make_shared<nn::Embedding>(o.vocab, o.d_model, gen));
    pos_ = register_module(
        "pos", std::make_shared<nn::SinusoidalPositionalEncoding>(o.max_len, o.d_model));
    layers_ = register_module("layers", std::make_shared<nn::ModuleList<LongRangeBlock>>());
    for (int64_t l = 0; l < o.layers; ++l)
      layers_->append(std::make_shared<LongRangeBlock>(o, l, gen));
    final_norm_ = register_module("final_norm", std::make_shared<nn::LayerNorm>(o.d_model));
    head_ = register_module("head", std::make_shared<nn::Linear>(o.d_model, 2, true, gen));
  }

  // ids (B,T) with T <= max_len -> logits (B,2).
  Var forward(const Tensor& ids) {
    Var x = pos_->forward(tok_->forward(ids));  // (B,T,d)
    for (const auto& layer : *layers_) x = layer->forward(x);
    return head_->forward(mean(final_norm_->forward(x), 1));  // mean over T: (B,d) -> (B,2)
  }

 private:
  std::shared_ptr<nn::Embedding> tok_;
  std::shared_ptr<nn::SinusoidalPositionalEncoding> pos_;
  std::shared_ptr<nn::ModuleList<LongRangeBlock>> layers_;
  std::shared_ptr<nn::LayerNorm> final_norm_;
  std::shared_ptr<nn::Linear> head_;
};

}  // namespace attn::experiments
