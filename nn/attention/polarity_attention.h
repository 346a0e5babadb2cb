// Polarity-aware linear attention (PolaFormer, 004 §4.2): linear attention that keeps the
// negative parts of q and k, and a learnable power map that sharpens the weights.
//
//   using namespace attn::nn;
//   PolarityAttention pa(/*d_model=*/32, /*nhead=*/2, gen);   // head width must be even
//   Var y = pa.forward(x);                                     // x (B,T,32) -> (B,T,32), causal
//   PolarityWeights w = pa.weights(x);                         // the two streams' (B,H,T,T) rows
//   Var a = causal_kernel_weights(fq, fk);                     // any kernel's implied rows
//
// A feature map phi >= 0 (elu + 1, ReLU) keeps q.k's positive-positive products only. Split
// q = q+ - q-, k = k+ - k- (q+ = relu(q), q- = relu(-q)); then
//   q.k = (q+.k+ + q-.k-) - (q+.k- + q-.k+) = same-sign - opposite-sign,
// two sums of non-negative products. PolaFormer computes each as its own linear attention
// stream over half of v's channels (no extra parameters), then concatenates the streams:
//   same:     fq = [g(q+), g(q-)],  fk = [g(k+), g(k-)],  y_s = linattn(fq, fk, v[:, :M/2])
//   opposite: fq = [g(q+), g(q-)],  fk = [g(k-), g(k+)],  y_o = linattn(fq, fk, v[:, M/2:])
//   y = out_proj([y_s, y_o])     (out_proj weighs the two streams' channels: the paper's
//                                 learnable coefficients G_s, G_o are a diagonal part of it)
// g is the power map g(x) = x^p per channel, p = 1 + 4 sigmoid(a) in (1, 5) with a learnt
// (starting at p = 3): its first and second derivatives are positive for x > 0, which by the
// paper's argument rescales the responses so that large q.k products gain on small ones — the
// rows' entropy falls. x^p is computed as exp(p log(x + 1e-6)), so p gets a gradient.
// Each stream is causal linear attention by prefix sums (attn::causal_linear_attention), linear
// in T with a (2D, M/2) state per stream.
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/attention/projected_attention.h"

namespace attn::nn {

// The causal rows a kernel attention implies: a[t][s] = fq_t . fk_s / sum_{s' <= t} fq_t . fk_s'
// for s <= t, 0 above the diagonal. fq, fk (...,T,D), non-negative -> (...,T,T). O(T^2): for
// reading and plotting the weights, not for the forward pass.
Var causal_kernel_weights(const Var& fq, const Var& fk, real eps = 1e-6);

struct PolarityWeights {
  Var same, opposite;  // (B,H,T,T) each, rows summing to 1
};

class PolarityAttention : public ProjectedAttention {
 public:
  PolarityAttention(int64_t d_model, int64_t nhead, Generator& gen, bool bias = true);

  Var forward(const Var& x) const;              // x (B,T,d_model) -> (B,T,d_model)
  PolarityWeights weights(const Var& x) const;  // the two streams' implied rows
  Var power() const;                            // p (1,H,1,D), in (1, 5)

  Var power_logit;  // a of p = 1 + 4 sigmoid(a), (1,H,1,D)

 private:
  struct Features {
    Var q, k_same, k_opposite;  // (B,H,T,2D)
  };
  Features features(const HeadsQKV& a) const;
};

}  // namespace attn::nn
