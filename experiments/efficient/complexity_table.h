// attention-flops' second part: 002 §39.3's complexity table measured rather than restated.
//
//   complexity_table(cfg, ctx);   // a table, results and one comparison, in the run's report
//
// Two columns of the table are measured on the tape:
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

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

// The fields it reads: path_t, conv_kernel (add them with add_complexity_fields).
void add_complexity_fields(Config& config);
void complexity_table(const Config& cfg, RunContext& ctx);

}  // namespace attn::experiments
