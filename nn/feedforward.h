// The position-wise feed-forward block of a transformer: two (or three) linear maps around a
// nonlinearity, applied to every position independently.
//
//   attn::Generator gen(0);
//   attn::nn::FeedForward ff(/*d_model=*/64, /*d_ff=*/256, attn::nn::Activation::kGELU, gen);
//   attn::Var y = ff.forward(x);                 // x (B,T,64) -> (B,T,64)
//   attn::nn::FeedForward glu(64, 172, attn::nn::Activation::kSwiGLU, gen, /*bias=*/false);
//
// ReLU / GELU (the 2017 model, BERT, GPT):  y = linear2(dropout(act(linear1(x))))
//   linear1 (d_ff, d_model), linear2 (d_model, d_ff) — the names nn.TransformerEncoderLayer uses.
// SwiGLU (Shazeer 2020, llama):  y = w2(dropout(silu(w1 x) * (w3 x)))
//   w1 (d_ff, d_model) the gate, w3 (d_ff, d_model) the value, w2 (d_model, d_ff) — the names of
//   Meta's llama reference code. A gated layer has three matrices instead of two, so llama picks
//   d_ff ~ 8/3 d_model to keep the parameter count of a 4 d_model ReLU layer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "autograd/generator.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

enum class Activation { kReLU, kGELU, kGELUTanh, kSwiGLU };

// "relu", "gelu", "gelu_tanh", "swiglu" (PyTorch's activation strings where they exist).
Activation activation_from_name(const std::string& name);
const char* activation_name(Activation a);
// act(x) for the ungated activations (ReLU, GELU, GELU-tanh).
Var activate(const Var& x, Activation a);

// linear2(dropout(act(linear1(x)))): the ungated block, shared by FeedForward and the
// transformer layers (which own linear1/linear2 themselves to keep PyTorch's names).
Var feed_forward(const Var& x,
                 const Linear& linear1,
                 const Linear& linear2,
                 Activation act,
                 const Dropout& dropout);

class FeedForward : public Module {
 public:
  FeedForward(int64_t d_model,
              int64_t d_ff,
              Activation activation,
              Generator& gen,
              bool bias = true,
              double dropout = 0.0,
              std::shared_ptr<Generator> dropout_gen = nullptr);

  Var forward(const Var& x) const;  // x (..., d_model) -> (..., d_model)

  Activation activation() const { return act_; }

  std::shared_ptr<Linear> linear1, linear2;  // ReLU / GELU
  std::shared_ptr<Linear> w1, w2, w3;        // SwiGLU
  std::shared_ptr<Dropout> dropout;

 private:
  Activation act_;
};

}  // namespace attn::nn
