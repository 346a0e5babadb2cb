// Scaled dot-product attention spelled out op by op, keeping every intermediate, for the
// experiments that print them (the library's attention layers live in nn/attention/).
//
//   attn::experiments::AttentionSteps s = attn::experiments::attention_steps(q, k, v, 1 /
//   std::sqrt(2.0)); s.scores;   // q k^T * scale          (..., Tq, Tk) s.weights;  // softmax
//   over the keys  (..., Tq, Tk), each row sums to 1 s.out;      // weights v              (...,
//   Tq, Dv)
//
// Each step is one op on the tape (matmul, mul_scalar, masked_fill, softmax, matmul), so a
// backward through `out` reaches q, k and v and the tape can be printed step by step.
#pragma once

#include "autograd/functional.h"

namespace attn::experiments {

struct AttentionSteps {
  Var scores, weights, out;
};

// q (...,Tq,D), k (...,Tk,D), v (...,Tk,Dv). `blocked` (optional, broadcastable to the scores)
// holds 1 where a query may not look: those scores become -1e9 before the softmax, so their
// weights are exactly 0 in float32.
AttentionSteps attention_steps(
    const Var& q, const Var& k, const Var& v, double scale, const Tensor* blocked = nullptr);

}  // namespace attn::experiments
