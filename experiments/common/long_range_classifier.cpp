#include "experiments/common/long_range_classifier.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

LongRangeBlock::LongRangeBlock(const LongRangeClassifierOptions& o, int64_t layer, Generator& gen)
    : Module("LongRangeBlock") {
  attn_norm_ = register_module("attn_norm", std::make_shared<nn::LayerNorm>(o.d_model));
  if (o.banded)
    banded_ = register_module(
        "attn", std::make_shared<nn::SlidingWindowAttention>(
                    o.d_model, o.nhead, o.window, gen, /*causal=*/false, o.global_tokens,
                    /*bias=*/true, o.random_links, o.random_seed + static_cast<uint64_t>(layer)));
  else
    dense_ = register_module(
        "attn",
        std::make_shared<nn::MultiheadAttention>(
            o.d_model, o.nhead, gen, nn::MultiheadAttentionOptions{.separate_projections = true}));
  ff_norm_ = register_module("ff_norm", std::make_shared<nn::LayerNorm>(o.d_model));
  ff_ = register_module("ff", std::make_shared<nn::FeedForward>(o.d_model, 2 * o.d_model,
                                                                nn::Activation::kGELU, gen));
}

Var LongRangeBlock::forward(const Var& x) {
  const Var h = attn_norm_->forward(x);
  const Var y = add(x, banded_ ? banded_->forward(h).out : dense_->forward(h, h, h).out);
  return add(y, ff_->forward(ff_norm_->forward(y)));
}

LongRangeClassifier::LongRangeClassifier(const LongRangeClassifierOptions& o, Generator& gen)
    : Module(o.banded ? "BandedLongRangeClassifier" : "DenseLongRangeClassifier"), o_(o) {
  tok_ = register_module("tok", std::make_shared<nn::Embedding>(o.vocab, o.d_model, gen));
  pos_ = register_module("pos",
                         std::make_shared<nn::SinusoidalPositionalEncoding>(o.max_len, o.d_model));
  layers_ = register_module("layers", std::make_shared<nn::ModuleList<LongRangeBlock>>());
  for (int64_t l = 0; l < o.layers; ++l)
    layers_->append(std::make_shared<LongRangeBlock>(o, l, gen));
  final_norm_ = register_module("final_norm", std::make_shared<nn::LayerNorm>(o.d_model));
  head_ = register_module("head", std::make_shared<nn::Linear>(o.d_model, o.classes, true, gen));
}

Var LongRangeClassifier::forward(const Tensor& ids) {
  Var x = pos_->forward(tok_->forward(ids));  // (B,T,d)
  for (const auto& layer : *layers_) x = layer->forward(x);
  const Var pooled = mean(final_norm_->forward(x), 1);  // (B,d)
  return head_->forward(pooled);                        // (B,classes)
}

}  // namespace attn::experiments
