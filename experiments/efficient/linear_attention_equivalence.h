// linear-attention's check that Schmidhuber's 1991 fast weights are causal linear attention: the
// three causal forms of linear attention (and the two non-causal ones) on the same q, k, v,
// their outputs and the gradients of sum(y * w) for a fixed random w, and the fast-weight matrix
// after the last step against phi(K)^T V.
//
//   parallel   nn::linear_attention(causal) — prefix sums in one fused op;
//   recurrent  nn::linear_attention_recurrent — the fast-weight loop, one step per token;
//   quadratic  (phi(Q) phi(K)^T masked to s <= t) V / row sums — a T x T matrix.
//
//   double loop_diff = equivalence_part(cfg, ctx);   // cfg: equiv_t, equiv_heads, d
#pragma once

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

// Prints the section, table and note, records the results; returns the loop's max |y diff|.
double equivalence_part(const Config& cfg, RunContext& ctx);

}  // namespace attn::experiments
