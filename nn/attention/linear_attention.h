// Linear attention (Katharopoulos et al. 2020): replace exp(q.k) by a dot product of feature
// maps, phi(q).phi(k) with phi(x) = elu(x) + 1 > 0, so the sum over keys can be reordered:
//
//   y_t = sum_s (phi(q_t).phi(k_s)) v_s / sum_s phi(q_t).phi(k_s)
//       = phi(q_t)^T [sum_s phi(k_s) v_s^T] / phi(q_t)^T [sum_s phi(k_s)]
//
// The bracketed sums do not depend on t: O(T D M) work instead of O(T^2 D), and no T x T matrix.
//
//   using namespace attn::nn;
//   Var y  = linear_attention(q, k, v, /*causal=*/false);   // q,k (B,H,T,D), v (B,H,T,M)
//   Var yc = linear_attention(q, k, v, /*causal=*/true);    // prefix sums (fused op)
//   Var yr = linear_attention_recurrent(q, k, v);           // the same, one step at a time
//   FastWeightState st;                                     // incremental decoding:
//   Var y_t = linear_attention_step(q_t, k_t, v_t, st);     // (B,H,1,D) -> (B,H,1,M)
//
// Three forms of one computation:
//   parallel, non-causal: S = phi(K)^T V (D,M) and z = sum_s phi(k_s) once, then every query
//     reads them (composed from matmul/sum/div, so the tape shows each step);
//   parallel, causal: prefix sums S_t, z_t over s <= t — the fused op attn::causal_linear_attention
//     (autograd/ops/fused/causal_linear_attention.cpp), O(T D M) time and O(D M) extra memory;
//   recurrent (fast weights): S_t = S_{t-1} + phi(k_t) v_t^T, z_t = z_{t-1} + phi(k_t),
//     y_t = phi(q_t)^T S_t / phi(q_t)^T z_t — an RNN whose hidden state is the matrix S, built
//     step by step from primitives (slice, matmul, add, div), so gradients flow through time.
// eps (default 1e-6, as the paper's code) is added to every denominator.
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/attention/projected_attention.h"

namespace attn::nn {

Var elu_feature_map(const Var& x);  // elu(x) + 1, elementwise, > 0

// q (B,H,T,D), k (B,H,S,D), v (B,H,S,M) -> (B,H,T,M). causal needs T == S.
Var linear_attention(const Var& q, const Var& k, const Var& v, bool causal, real eps = 1e-6);

// The fast-weight state after some steps: S (B,H,D,M), z (B,H,1,D).
struct FastWeightState {
  Var s, z;
  int64_t steps = 0;
};
// One step: q, k (B,H,1,D), v (B,H,1,M) -> y (B,H,1,M); updates the state.
Var linear_attention_step(
    const Var& q, const Var& k, const Var& v, FastWeightState& state, real eps = 1e-6);
// Causal linear attention as the recurrence above, all T steps -> (B,H,T,M).
Var linear_attention_recurrent(const Var& q, const Var& k, const Var& v, real eps = 1e-6);

// Multi-head linear self-attention:  out_proj(heads(linear_attention(q_proj x, k_proj x, v_proj
// x))). Parameters q_proj, k_proj, v_proj, out_proj (see projected_attention.h).
//
//   attn::nn::LinearAttention la(/*d_model=*/64, /*nhead=*/4, gen, /*causal=*/true);
//   Var y  = la.forward(x);             // x (B,T,64) -> (B,T,64), parallel form
//   Var y2 = la.forward_recurrent(x);   // the same values through the recurrence (causal only)
class LinearAttention : public ProjectedAttention {
 public:
  LinearAttention(int64_t d_model,
                  int64_t nhead,
                  Generator& gen,
                  bool causal = false,
                  bool bias = true,
                  double eps = 1e-6);

  Var forward(const Var& x) const;
  Var forward_recurrent(const Var& x) const;

  bool causal() const { return causal_; }

 private:
  bool causal_;
  real eps_;
};

}  // namespace attn::nn
