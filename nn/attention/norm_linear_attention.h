// TransNormer's normalised linear attention (004 §4.2, "The Devil in Linear Transformer"): causal
// linear attention with the denominator removed and an RMS norm on the output instead.
//
//   using namespace attn::nn;
//   NormLinearAttention na(/*d_model=*/32, /*nhead=*/2, gen);
//   Var y = na.forward(x);              // x (B,T,32) -> (B,T,32), causal
//   Var n = causal_kernel_sums(fq, fk, v);   // sum_{s<=t} (fq_t . fk_s) v_s, no denominator
//
// Linear attention divides by phi(q_t) . sum_{s<=t} phi(k_s); TransNormer observes that this
// denominator can make the gradients unbounded and drops it, keeping the rows' scale in check
// with a norm instead:
//   y_t = RMSNorm( sum_{s<=t} (phi(q_t) . phi(k_s)) v_s ),   phi = elu + 1, per head over D.
// The sum without denominator is computed in O(T D M) from the fused prefix-sum op, which does
// divide: causal_linear_attention(fq, fk, v) = num / (den + eps), and den_t = fq_t . z_t with
// z_t = sum_{s<=t} fk_s, itself the prefix mean of fk (causal_linear_attention with unit
// features) times the count t + 1. So num = that quotient times (den + eps), linear in T.
// (A per-row RMS norm is blind to a row's scale, so here it also removes the denominator's
// effect on the forward values: the two orders differ in the gradients' route, not the values.)
// The full TransNormer stack puts local attention below and this layer above (the zoo's
// "transnormer" variant, experiments/common/zoo_variants_linear.cpp).
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/attention/projected_attention.h"
#include "nn/norms.h"

namespace attn::nn {

// num_t = sum_{s<=t} (fq_t . fk_s) v_s. fq, fk (B,H,T,D) non-negative, v (B,H,T,M) -> (B,H,T,M).
Var causal_kernel_sums(const Var& fq, const Var& fk, const Var& v);

class NormLinearAttention : public ProjectedAttention {
 public:
  NormLinearAttention(int64_t d_model, int64_t nhead, Generator& gen, bool bias = true);
  Var forward(const Var& x) const;  // x (B,T,d_model) -> (B,T,d_model)

  Var norm_weight;  // (D): the RMS norm's gain, shared by the heads
};

}  // namespace attn::nn
