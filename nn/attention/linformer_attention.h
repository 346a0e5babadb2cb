// Linformer (Wang et al. 2020): attention whose keys and values are first compressed along the
// sequence axis to k rows, so the score matrix is T x k instead of T x T.
//
//   attn::nn::LinformerAttention lin(/*d_model=*/32, /*nhead=*/2, /*max_len=*/256, /*k=*/16, gen);
//   attn::Var y = lin.forward(x);   // x (B,T,32), T <= 256 -> (B,T,32)
//
//   q, k, v = x Wq, x Wk, x Wv, split into heads (B,H,T,Dh)
//   E_T = E[:, :T], F_T = F[:, :T]              E, F (k, max_len), learned, shared by the heads
//   K~ = E_T k (B,H,k,Dh),  V~ = F_T v (B,H,k,Dh)  (each of the k rows mixes all T positions)
//   y = softmax(q K~^T / sqrt(Dh)) V~  (B,H,T,Dh), heads merged, out_proj
//
// The bet is the paper's observation that the T x T attention matrix is close to low rank: k
// rows of mixed keys are enough to reproduce it. Time and memory are O(T k). What it trades
// away: every compressed row mixes all positions, so position t's output depends on the future
// (no causal form), and the length is capped at max_len (E and F have one column per position).
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "nn/attention/projected_attention.h"

namespace attn::nn {

// Parameters: q_proj, k_proj, v_proj, out_proj (projected_attention.h), e_proj and f_proj
// (k, max_len), initialised N(0, 1/k) as in the reference implementation's xavier-like scale.
class LinformerAttention : public ProjectedAttention {
 public:
  LinformerAttention(
      int64_t d_model, int64_t nhead, int64_t max_len, int64_t k, Generator& gen, bool bias = true);

  Var forward(const Var& x) const;  // x (B,T,d_model), T <= max_len -> (B,T,d_model)

  int64_t max_len() const { return max_len_; }
  int64_t k() const { return k_; }

  Var e_proj, f_proj;  // (k, max_len)

 private:
  int64_t max_len_, k_;
};

}  // namespace attn::nn
