// Learned absolute positions (GPT/BERT style): one trained vector per position.
//
//   attn::Generator gen(0);
//   attn::nn::LearnedPositionalEmbedding pos(/*max_len=*/256, /*d_model=*/64, gen);
//   attn::Var h = pos.forward(tok_emb);                  // (B,T,64) + weight[0:T]
//   attn::Var step = pos.forward(next_emb, T);           // one decoding step at position T
//   pos.named_parameters();                              // {"weight", (256,64)}
//
// The table is an Embedding indexed by position: parameter `weight` (max_len, d_model),
// initialised N(0, init_std^2) with init_std = 1 as PyTorch's nn.Embedding (GPT-2 uses 0.02).
// Positions past max_len do not exist: asking for them is an error, not a wrap-around.
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "nn/module.h"

namespace attn::nn {

class LearnedPositionalEmbedding : public Module {
 public:
  LearnedPositionalEmbedding(int64_t max_len,
                             int64_t d_model,
                             Generator& gen,
                             double init_std = 1.0);

  // x (B,T,d_model) or (T,d_model) -> x + weight[start_pos : start_pos+T] broadcast over B.
  // The gradient reaches exactly the rows used.
  Var forward(const Var& x, int64_t start_pos = 0) const;
  // weight[start_pos : start_pos+len] -> (len, d_model).
  Var positions(int64_t start_pos, int64_t len) const;

  int64_t max_len() const { return max_len_; }
  int64_t d_model() const { return d_model_; }

  Var weight;

 private:
  int64_t max_len_, d_model_;
};

}  // namespace attn::nn
