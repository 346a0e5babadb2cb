// attention-flops' second part: 002 §39.3's complexity table measured rather than restated.
//
//   complexity_table(cfg, ctx);   // tables, results and two comparisons, in the run's report
//   double f = attention_product_flops(8000, 64);   // counted: 4 T^2 d = 1.6e10
//
// All three columns of the table are measured on the tape:
// - complexity per layer: the FLOPs of the products one layer's forward records
//   (Tape::forward_flops, on the reference path), at two sizes in each of T, d and the kernel k
//   with the others held: the exponents should be RNN (1, 2, 0), attention (2, 1, 0) and a dense
//   convolution (1, 2, 1). 000 §5.1 states the same three orders.
// - sequential operations: the ops one layer's forward records, at two lengths T1 < T2. A
//   recurrent layer records one dependent step per position (count ~ T); attention and a
//   convolution record a fixed number of whole-sequence ops (count ~ 1). The exponent is
//   log(count(T2) / count(T1)) / log(T2 / T1).
// - maximum path length: the fewest stacked layers after which the output at the last position
//   has a gradient on the first input (found by backward, trying depth 1, 2, ...). One
//   attention layer reaches it. A causal convolution of kernel k reaches k - 1 more positions
//   per layer, so (T - 1) / (k - 1) layers; only with dilations 1, k, k^2, ... does the reach
//   multiply by k per layer, which is where the table's log_k T comes from.
#pragma once

#include <cstdint>

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

// The fields it reads: path_t, conv_kernel (add them with add_complexity_fields).
void add_complexity_fields(Config& config);
void complexity_table(const Config& cfg, RunContext& ctx);

// Counted FLOPs of one layer's products for an input (1,T,d): one head of self-attention with
// Q = K = V = x (Q K^T and A V, 2 T^2 d each), and an RNN of width d (x W_ih^T and h W_hh^T,
// 2 T d^2 each).
double attention_product_flops(int64_t t, int64_t d);
double recurrent_product_flops(int64_t t, int64_t d);

}  // namespace attn::experiments
