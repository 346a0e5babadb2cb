// Synthesizer (Tay et al. 2021): attention weights that are not computed from query-key dot
// products at all. Two forms:
//
//   attn::nn::DenseSynthesizer dense(/*d_model=*/32, /*nhead=*/2, /*max_len=*/64, gen);
//   attn::nn::RandomSynthesizer rnd(32, 2, 64, gen);
//   attn::Var y = dense.forward(x);   // x (B,T,32), T <= 64 -> (B,T,32)
//
// Dense: each token alone writes its own row of scores, one per position it may read:
//   S_t = W2 relu(W1 x_t + b1) + b2        W1 (d,d), W2 (H max_len, d): row t of every head
//   A = softmax(S[:, :, :T] (+ causal mask))   (B,H,T,T)
// Random: the score matrix is a parameter (or a fixed draw), the same for every input:
//   A = softmax(R[:, :T, :T] (+ causal mask))  R (H, max_len, max_len)
// Both then mix values as attention does: y = A v, v = x Wv split into heads, heads merged,
// out_proj. Causal: scores of later positions are hidden before the softmax.
//
// What it trades away: no token-token interaction in the weights. Dense still adapts to the
// token at t but not to what the other tokens are; random mixes by position alone, a learned
// fixed pattern (like a convolution over the whole length). Time O(T max_len d) (dense) and
// O(T^2) per head (random): it is not cheaper than attention, and its parameters grow with
// max_len (random: H max_len^2).
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/generator.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

// Parameters: w1 (d,d), w2 (H max_len, d), v_proj, out_proj (Linear).
class DenseSynthesizer : public Module {
 public:
  DenseSynthesizer(int64_t d_model,
                   int64_t nhead,
                   int64_t max_len,
                   Generator& gen,
                   bool causal = false,
                   bool bias = true);
  Var forward(const Var& x) const;  // x (B,T,d_model), T <= max_len -> (B,T,d_model)
  Var weights(const Var& x) const;  // the synthesized attention A (B,H,T,T)

  std::shared_ptr<Linear> w1, w2, v_proj, out_proj;

 private:
  int64_t d_model_, nhead_, max_len_;
  bool causal_;
};

// Parameters: scores (H, max_len, max_len) N(0,1) (a buffer, fixed, when !trainable), v_proj,
// out_proj.
class RandomSynthesizer : public Module {
 public:
  RandomSynthesizer(int64_t d_model,
                    int64_t nhead,
                    int64_t max_len,
                    Generator& gen,
                    bool causal = false,
                    bool trainable = true,
                    bool bias = true);
  Var forward(const Var& x) const;  // x (B,T,d_model), T <= max_len -> (B,T,d_model)
  Var weights(int64_t t) const;     // A (H,T,T), the same for every input

  std::shared_ptr<Linear> v_proj, out_proj;
  Var scores;  // (H, max_len, max_len)

 private:
  int64_t d_model_, nhead_, max_len_;
  bool causal_;
};

}  // namespace attn::nn
