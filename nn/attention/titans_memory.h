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
// M0, S at 0. With memory_depth = 2 the memory is a two-layer MLP (mlp_memory_read below), each
// weight written by the same rule with its own gradient (docs/chapters/titans-memory.md; the
// memory as a gate and as a layer are in nn/attention/titans_variants.h). Each segment reads only
// the memory written by EARLIER segments, and inside a segment row i sees rows <= i only, so the
// layer is causal.
//
// All of it is elementary tape ops (linear, matmul, sub, mul, sigmoid, concat, sdpa), so training
// differentiates through every memory update: the outer loop learns W_q, W_k, W_v, M0, P and the
// gates that make the test-time inner loop useful. Keys and queries are L2-normalised so the
// inner step is stable for any theta in (0, 1): the Hessian (2/n) K^T K has eigenvalues <= 2.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

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

// The memory and its momentum (none before the first write): one weight matrix of the memory.
struct NeuralMemory {
  Var m;                 // (B,d,e)
  std::optional<Var> s;  // (B,d,e)
};
// The momentum-and-forgetting step on one weight given its surprise G (any memory's gradient):
// s' = eta s - theta G, m' = (1 - alpha) m + s'. eta, theta, alpha: shape (1), in (0, 1).
NeuralMemory memory_step(
    const NeuralMemory& mem, const Var& grad, const Var& eta, const Var& theta, const Var& alpha);
// One test-time write of the linear memory: memory_step with G = memory_gradient(m, k, v).
NeuralMemory memory_write(const NeuralMemory& mem,
                          const Var& k,
                          const Var& v,
                          const Var& eta,
                          const Var& theta,
                          const Var& alpha);

// The deep (two-layer MLP) memory: M(u) = phi(u W1) W2 with phi(h) = silu(h) / sqrt(hidden) (the
// scale keeps |phi| near 1 so the inner step stays stable, as the l2-normalised keys do for W1).
// mlp_memory_read: u (B,n,d), w1 (B,d,h), w2 (B,h,e) -> (B,n,e).
Var mlp_memory_read(const Var& w1, const Var& w2, const Var& u);
// The gradients of l = (1/n) sum_i ||M(k_i) - v_i||^2 in closed form (backpropagation written
// out, so the write stays a handful of tape ops the outer loop differentiates through):
//   a = phi(k W1), r = a W2 - v;  dW2 = (2/n) a^T r;  dW1 = k^T ((2/n) r W2^T * phi'(k W1)).
// Returns {dW1, dW2}.
std::pair<Var, Var> mlp_memory_gradients(const Var& w1, const Var& w2, const Var& k, const Var& v);

// What one memory write saw, batch row by batch row (filled only when a trace is attached): the
// associative loss of the segment's pairs before the write (the surprise, as a loss) and the
// Frobenius norm of the change of every memory weight (how much was written).
struct MemoryWriteRecord {
  int64_t segment = 0;
  std::vector<double> loss_before, update_norm;
};

struct MemoryOptions {
  int64_t d_model = 32;
  int64_t depth = 1;   // 1: a linear map M (d,d); 2: the MLP memory with `hidden` units
  int64_t hidden = 0;  // 0: d_model
};

// The long-term memory a Titans layer owns: its projections, initial weights and gates, the read
// (a forward pass, no update) and the write (one surprise step). It registers its parameters on
// the layer that owns it (the names below), so MAC, MAG and MAL share one implementation:
//   class MyLayer : public Module, public LongTermMemory { ... LongTermMemory(*this, mo, gen) };
//   MemoryWeights w = start(B);  Var h = read(w, xs);  w = write(w, xs);
using MemoryWeights = std::vector<NeuralMemory>;  // {M} (linear) or {W1, W2} (deep)
class LongTermMemory {
 public:
  LongTermMemory(Module& owner, const MemoryOptions& o, Generator& gen);

  MemoryWeights start(int64_t batch) const;  // the learned initial weights, per batch row
  // x_c (B,n,d): Q = l2norm(x_c W_q), returns M(Q) (B,n,d) without changing the memory.
  Var read(const MemoryWeights& w, const Var& xs) const;
  // K = l2norm(x_c W_k), V = x_c W_v: one momentum-and-forgetting step on every weight.
  MemoryWeights write(const MemoryWeights& w, const Var& xs, int64_t segment = 0) const;
  // x (B,T,d) in segments: segment c is read from the memory the segments before it wrote
  // (causal); the reads (B,T,d). The memory branch of MAG and the memory layer of MAL.
  Var read_segments(const Var& x, int64_t segment) const;

  // The gates as used: sigmoid of their logits, shape (1) each.
  Var eta() const;
  Var theta() const;
  Var alpha() const;
  const MemoryOptions& memory_options() const { return mo_; }
  // Records every later write into `records` (nullptr: stop). Not thread-safe; for measurement.
  void trace_writes(std::vector<MemoryWriteRecord>* records) const { trace_ = records; }

  std::shared_ptr<Linear> mem_q, mem_k, mem_v;  // W_q, W_k, W_v of the memory (no bias)
  Var memory_init;                          // linear: M0 (d,d); deep: W1's initial value (d,hidden)
  Var memory_init_out;                      // deep only: W2's initial value (hidden,d)
  Var eta_logit, theta_logit, alpha_logit;  // (1) each

 private:
  void record(const MemoryWeights& before,
              const MemoryWeights& after,
              const Var& k,
              const Var& v,
              int64_t segment) const;
  MemoryOptions mo_;
  mutable std::vector<MemoryWriteRecord>* trace_ = nullptr;
};

struct TitansOptions {
  int64_t d_model = 32, nhead = 2;
  int64_t segment = 16;    // rows per segment (the last may be shorter)
  int64_t persistent = 2;  // learned, input-independent context rows
  bool bias = true;        // of q/k/v/out_proj (the memory projections have none)
  int64_t memory_depth = 1, memory_hidden = 0;  // MemoryOptions::depth and ::hidden
};

class TitansMemoryAttention : public ProjectedAttention, public LongTermMemory {
 public:
  TitansMemoryAttention(const TitansOptions& o, Generator& gen);

  Var forward(const Var& x) const;  // (B,T,d_model) -> (B,T,d_model)
  const TitansOptions& options() const { return o_; }

  Var persistent_tokens;  // P (persistent,d)

 private:
  TitansOptions o_;
};

}  // namespace attn::nn
