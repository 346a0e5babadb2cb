// A Titans-style memory as context (Behrouz et al. 2024, "Titans: Learning to Memorize at Test
// Time", the MAC variant), small enough to read: softmax attention over one segment at a time,
// with a neural long-term memory that is READ to give the segment extra tokens and WRITTEN by a
// gradient step after the segment, at inference as in training.
//
//   using namespace attn::nn;
//   TitansMemoryAttention mac({.d_model = 32, .nhead = 2, .segment = 16, .persistent = 2}, gen);
//   Var y = mac.forward(x);   // x (B,T,32) -> (B,T,32), causal
//
// The memory is a linear map M (d,d) per sequence: M(u) = u M for a row u. For the segment
// X_c (n rows):
//   read:    Q = l2norm(X_c W_q),  H = Q M           n memory tokens (no update while reading)
//   attend:  context = [P ; H ; X_c]  (P: `persistent` learned rows, the same for every input)
//            y_i = softmax attention of X_c's row i over the context through q/k/v/out_proj,
//            seeing every persistent token, memory tokens j <= i and segment rows j <= i
//   write:   K = l2norm(X_c W_k),  V = X_c W_v,  loss l(M) = (1/n) sum_i ||k_i M - v_i||^2
//            G = dl/dM = (2/n) K^T (K M - V)         (closed form: memory_gradient)
//            S = eta S - theta G                     (momentum: the "surprise" carried over)
//            M = (1 - alpha) M + S                   (alpha: the forgetting gate)
// eta, theta, alpha are sigmoids of learned scalars (the paper makes them depend on the input;
// here they are data-independent, see docs/chapters/attention-zoo.md). M starts at a learned
// M0, S at 0. Each segment reads only the memory written by EARLIER segments, and inside a
// segment row i sees rows <= i only, so the layer is causal.
//
// All of it is elementary tape ops (linear, matmul, sub, mul, sigmoid, concat, sdpa), so training
// differentiates through every memory update: the outer loop learns W_q, W_k, W_v, M0, P and the
// gates that make the test-time inner loop useful. Keys and queries are L2-normalised so the
// inner step is stable for any theta in (0, 1): the Hessian (2/n) K^T K has eigenvalues <= 2.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/attention/projected_attention.h"
#include "nn/linear.h"

namespace attn::nn {

// x / sqrt(sum_last_axis(x^2) + eps), row by row.
Var l2_normalize(const Var& x, real eps = 1e-6);

// The gradient of l(M) = (1/n) sum_i ||k_i M - v_i||^2 over the n rows of k (B,n,d), v (B,n,e),
// for m (B,d,e):  (2/n) k^T (k m - v)  -> (B,d,e).
Var memory_gradient(const Var& m, const Var& k, const Var& v);

// The memory and its momentum (none before the first write).
struct NeuralMemory {
  Var m;                 // (B,d,e)
  std::optional<Var> s;  // (B,d,e)
};
// One test-time write: s' = eta s - theta G, m' = (1 - alpha) m + s', with G = memory_gradient.
// eta, theta, alpha: shape (1), in (0, 1).
NeuralMemory memory_write(const NeuralMemory& mem,
                          const Var& k,
                          const Var& v,
                          const Var& eta,
                          const Var& theta,
                          const Var& alpha);

struct TitansOptions {
  int64_t d_model = 32, nhead = 2;
  int64_t segment = 16;    // rows per segment (the last may be shorter)
  int64_t persistent = 2;  // learned, input-independent context rows
  bool bias = true;        // of q/k/v/out_proj (the memory projections have none)
};

class TitansMemoryAttention : public ProjectedAttention {
 public:
  TitansMemoryAttention(const TitansOptions& o, Generator& gen);

  Var forward(const Var& x) const;  // (B,T,d_model) -> (B,T,d_model)

  // The gates as used: sigmoid of their logits, shape (1) each.
  Var eta() const;
  Var theta() const;
  Var alpha() const;
  const TitansOptions& options() const { return o_; }

  std::shared_ptr<Linear> mem_q, mem_k, mem_v;  // W_q, W_k, W_v of the memory (no bias)
  Var memory_init;                              // M0 (d,d)
  Var persistent_tokens;                        // P (persistent,d)
  Var eta_logit, theta_logit, alpha_logit;      // (1) each

 private:
  TitansOptions o_;
};

}  // namespace attn::nn
