// Self-attention's backward pass by hand, in double precision and without the tape, beside the
// gradients the tape computes (worked-example, cat-sat-mat).
//
//   HandGradientInputs in{.x = x, .w_q = eye, .w_k = eye, .w_v = wv, .scale = 1 / std::sqrt(2.0),
//                         .g = g, .tokens = tok};
//   report_hand_gradients(ctx, in);   // tables: each gradient by tape and by hand, max |diff|
//
// The computation (row vectors, as PyTorch): Q = X W_Q, K = X W_K, V = X W_V,
// S = scale Q K^T, A = softmax(S) (per row), out = A V, loss L = sum(out o G) for a fixed G, so
// dL/dout = G. The closed forms, each one line below:
//   dV = A^T dOut                 dA = dOut V^T
//   dS = A o (dA - rowsum(dA o A))          (softmax's derivative, row by row)
//   dQ = scale dS K               dK = scale dS^T Q
//   dX = dQ W_Q^T + dK W_K^T + dV W_V^T     (X reaches the loss along three paths)
#pragma once

#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace attn::experiments {

class RunContext;

struct HandGradientInputs {
  Tensor x;                         // (T, d)
  Tensor w_q, w_k, w_v;             // (d, d): Q = X W_Q, ...
  double scale = 1;                 // the scores' factor, 1/sqrt(d_k) or 1
  Tensor g;                         // (T, d): dL/dout
  std::vector<std::string> tokens;  // row labels
};

// A matrix in double precision, row-major.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double at(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

// Every intermediate and every gradient of the computation above, by the closed forms.
struct HandAttention {
  Matrix q, k, v, scores, a, out;
  Matrix d_out, d_v, d_a, d_scores, d_q, d_k, d_x;
};
HandAttention hand_attention(const HandGradientInputs& in);

// Runs the same computation on the tape (every step one elementary op; Q and K are matmuls by
// W_Q and W_K even when those are the identity, so each has its own node and gradient), prints
// the tape, calls backward, and reports, for out, A, scores, Q, K, V and X, the tape's gradient
// beside the hand one with their largest difference, and the formulas. Results:
// grad_max_diff_<name> per tensor and hand_vs_tape_max_diff over all of them.
// Throws attn::Error (a failed run) when they differ by more than float rounding allows.
void report_hand_gradients(RunContext& ctx, const HandGradientInputs& in);

}  // namespace attn::experiments
