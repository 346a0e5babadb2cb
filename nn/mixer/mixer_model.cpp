#include "nn/mixer/mixer_model.h"

#include <utility>

#include "autograd/functional.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/multihead_attention.h"
#include "nn/attention/sliding_window.h"

namespace attn::nn {

Mixer softmax_mixer(int64_t d_model, int64_t nhead, bool causal, Generator& gen) {
  auto mha = std::make_shared<MultiheadAttention>(
      d_model, nhead, gen, MultiheadAttentionOptions{.separate_projections = true});
  return {mha, [mha, causal](const Var& x) {
            return mha->forward(x, x, x, AttentionMasks{.causal = causal}).out;
          }};
}

Mixer linear_mixer(int64_t d_model, int64_t nhead, bool causal, Generator& gen) {
  auto la = std::make_shared<LinearAttention>(d_model, nhead, gen, causal);
  return {la, [la](const Var& x) { return la->forward(x); }};
}

Mixer window_mixer(int64_t d_model, int64_t nhead, int64_t window, bool causal, Generator& gen) {
  auto swa = std::make_shared<SlidingWindowAttention>(d_model, nhead, window, gen, causal);
  return {swa, [swa](const Var& x) { return swa->forward(x).out; }};
}

MixerBlock::MixerBlock(const MixerModelOptions& o, Mixer mixer, Generator& gen)
    : Module("MixerBlock"), mixer_(std::move(mixer)) {
  mixer_norm_ = register_module("mixer_norm", std::make_shared<LayerNorm>(o.d_model));
  register_module("mixer", mixer_.module);
  if (o.ff_mult > 0) {
    ff_norm_ = register_module("ff_norm", std::make_shared<LayerNorm>(o.d_model));
    ff_ = register_module("ff", std::make_shared<FeedForward>(o.d_model, o.ff_mult * o.d_model,
                                                              Activation::kGELU, gen));
  }
}

Var MixerBlock::forward(const Var& x) const {
  const Var y = add(x, mixer_.forward(mixer_norm_->forward(x)));
  return ff_ ? add(y, ff_->forward(ff_norm_->forward(y))) : y;
}

MixerModel::MixerModel(const MixerModelOptions& o, const MixerFactory& make_mixer, Generator& gen)
    : Module("MixerModel"), o_(o) {
  tok_ = register_module("tok", std::make_shared<Embedding>(o.vocab, o.d_model, gen));
  if (o.positions)
    pos_ = register_module("pos",
                           std::make_shared<SinusoidalPositionalEncoding>(o.max_len, o.d_model));
  layers_ = register_module("layers", std::make_shared<ModuleList<MixerBlock>>());
  for (int64_t l = 0; l < o.layers; ++l)
    layers_->append(std::make_shared<MixerBlock>(o, make_mixer(l, gen), gen));
  final_norm_ = register_module("final_norm", std::make_shared<LayerNorm>(o.d_model));
  head_ = register_module("head", std::make_shared<Linear>(o.d_model, o.classes, true, gen));
}

Var MixerModel::hidden(const Tensor& ids) const {
  Var x = tok_->forward(ids);  // (B,T,d)
  if (pos_) x = pos_->forward(x);
  for (const auto& layer : *layers_) x = layer->forward(x);
  return final_norm_->forward(x);
}

Var MixerModel::forward_positions(const Tensor& ids) const {
  return head_->forward(hidden(ids));
}

Var MixerModel::forward(const Tensor& ids) const {
  const Var h = hidden(ids);  // (B,T,d)
  const int64_t t = h.size(1);
  return head_->forward(reshape(slice(h, 1, t - 1, t), {h.size(0), o_.d_model}));
}

}  // namespace attn::nn
