// ALiBi (attention with linear biases): no position vectors at all; each head adds
// -slope_h * distance to its attention scores, so far-away keys are penalised linearly.
//
//   std::vector<double> m = attn::nn::alibi_slopes(8);    // 1/2, 1/4, ..., 1/256
//   attn::Tensor bias = attn::nn::alibi_bias(8, T, T);    // (1,8,T,T), add to the scores
//   // e.g. the additive bias (attn_mask of float type) of scaled_dot_product_attention,
//   // combined with a causal mask for a decoder.
//
// Slopes: for n heads with n a power of two, a geometric sequence starting at and with ratio
// 2^(-8/n). Otherwise take the n' = 2^floor(log2 n) slopes of n' heads and fill the remaining
// n - n' heads with every other slope of the 2n'-head sequence (the paper's rule, which keeps
// the slopes spread over the same range).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace attn::nn {

std::vector<double> alibi_slopes(int64_t nhead);

// (1, nhead, tq, tk): bias[0,h,i,j] = -slope_h * |pos_q(i) - j|, where the queries are the last
// tq of the tk positions, pos_q(i) = tk - tq + i (so tq = 1 is a KV-cache decoding step). With a
// causal mask only j <= pos_q(i) survive, and the bias is the paper's -slope * (i - j).
Tensor alibi_bias(int64_t nhead, int64_t tq, int64_t tk);

}  // namespace attn::nn
