// Attention-weight refinement (AWRSR, "Pay Attention to Attention for Sequential
// Recommendation", 004 §4.2): attention computed over the rows of an attention matrix.
//
//   using namespace attn::nn;
//   RefinedAttention ra(/*d_model=*/32, /*nhead=*/2, /*max_len=*/64, /*width=*/16,
//                       Refinement::kAdditive, gen);
//   RefinedWeights w = ra.weights(x);   // A, refined B rows and the rows the output uses
//   Var y = ra.forward(x);              // x (B,T,32), T <= 64 -> (B,T,32), causal
//
// Row i of A = softmax(q k^T / sqrt(D)) (causal) is how query i spreads its attention over the
// keys: a description of token i. AWRSR treats these rows as items and attends over them:
//   simple:    B = softmax( (A W_q)(A W_k)^T / sqrt(r) ),  y = B V      (W_q, W_k: (max_len, r)
//              per head, their first T rows used: a row of A has T entries)
//   additive:  y = (A + B) V / 2   (the two levels balanced; each row still sums to 1)
// B's scores are causal too: row j of A only reads keys <= j, so query i comparing itself with
// rows j <= i reads nothing after i. The cost is A's O(T^2) plus the refinement's O(T^2 r).
// (AWRSR's value-weighted and stochastic refinements are not built: see docs/coverage.md.)
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/attention/projected_attention.h"

namespace attn::nn {

enum class Refinement { kSimple, kAdditive };

struct RefinedWeights {
  Var first, refined, used;  // A, B and the rows applied to V (B or (A + B) / 2), (B,H,T,T)
};

class RefinedAttention : public ProjectedAttention {
 public:
  RefinedAttention(int64_t d_model,
                   int64_t nhead,
                   int64_t max_len,
                   int64_t width,
                   Refinement kind,
                   Generator& gen,
                   bool bias = true);

  Var forward(const Var& x) const;  // x (B,T,d_model), T <= max_len
  RefinedWeights weights(const Var& x) const;

  Var refine_q, refine_k;  // W_q, W_k: (H, max_len, width)

 private:
  RefinedWeights weights_of(const HeadsQKV& a) const;
  int64_t max_len_, width_;
  Refinement kind_;
};

}  // namespace attn::nn
