// Self-attention with no projections (W_Q = W_K = W_V = I): what the raw inputs do to
// themselves. Used by identity-lookup (002) and qkv-identity (004).
//
//   Tensor x = Tensor::randn({8, 64}, gen);                 // T = 8 tokens of width d = 64
//   SelfAttentionStats s = self_attention_stats(x, 1 / std::sqrt(64.0));
//   s.scores;              // x x^T * scale (8,8), symmetric
//   s.weights;             // softmax over each row (8,8), not symmetric
//   s.mean_diagonal;       // mean of weights[i,i]: how much each token attends to itself
//   s.diagonal_is_max;     // share of rows whose largest score is their own
//   one_hot_rows(4, 16);   // (4,16) with a 1 at [i,i]
#pragma once

#include <cstdint>

#include "autograd/tensor.h"

namespace attn::experiments {

struct SelfAttentionStats {
  Tensor scores, weights;       // (T,T)
  double mean_diagonal = 0;     // mean_i weights[i,i]
  double diagonal_is_max = 0;   // fraction of rows i with scores[i,i] >= every scores[i,j]
  double score_asymmetry = 0;   // max |scores - scores^T|
  double weight_asymmetry = 0;  // max |weights - weights^T|
};

// x (T,d) used as queries, keys and values, through experiments/common/attention_steps.h (the
// elementary ops), without recording a tape.
SelfAttentionStats self_attention_stats(const Tensor& x, double scale);

// (rows, d) with row i the i-th unit vector (rows <= d).
Tensor one_hot_rows(int64_t rows, int64_t d);

}  // namespace attn::experiments
