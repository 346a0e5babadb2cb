// A mixer attnlab does not have, added from outside it: gated attention.
//
//   attn::Generator gen(1);
//   coursework::GatedAttention layer(32, 2, gen);    // d_model 32, 2 heads, causal
//   attn::Var y = layer.forward(x);                   // x (B,T,32) -> y (B,T,32)
//
//   y = sigmoid(x W_g + b_g) * MHA(x)      (elementwise; MHA causal: position t reads <= t)
//
// Each output channel of softmax attention is scaled by a gate in (0, 1) that the token itself
// computes, so a token can switch off what attention brought it (gated attention units and the
// output gates of recent LLM attention layers work this way). gated_attention_plugin.cpp
// registers it as the mixer "gated-softmax", which `attnlab run attention-zoo --plugin ...` and
// `attnlab train ... --model mixer --mixer gated-softmax --plugin ...` then run.
#pragma once

#include <cstdint>
#include <memory>

#include <attnlab/nn/attention/multihead_attention.h>
#include <attnlab/nn/linear.h>
#include <attnlab/nn/module.h>

namespace coursework {

class GatedAttention : public attn::nn::Module {
 public:
  GatedAttention(int64_t d_model, int64_t nhead, attn::Generator& gen);
  attn::Var forward(const attn::Var& x) const;  // (B,T,d_model) -> (B,T,d_model)

 private:
  std::shared_ptr<attn::nn::MultiheadAttention> attention_;  // "attention": q/k/v/out
  std::shared_ptr<attn::nn::Linear> gate_;                   // "gate": W_g, b_g
};

}  // namespace coursework
