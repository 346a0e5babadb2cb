#include "gated_attention.h"

#include <attnlab/autograd/functional.h>

namespace coursework {

GatedAttention::GatedAttention(int64_t d_model, int64_t nhead, attn::Generator& gen)
    : Module("GatedAttention") {
  attention_ = register_module(
      "attention",
      std::make_shared<attn::nn::MultiheadAttention>(
          d_model, nhead, gen, attn::nn::MultiheadAttentionOptions{.separate_projections = true}));
  gate_ = register_module("gate", std::make_shared<attn::nn::Linear>(d_model, d_model, true, gen));
}

attn::Var GatedAttention::forward(const attn::Var& x) const {
  const attn::Var mixed = attention_->forward(x, x, x, {.causal = true}).out;
  return attn::mul(attn::sigmoid(gate_->forward(x)), mixed);
}

}  // namespace coursework
