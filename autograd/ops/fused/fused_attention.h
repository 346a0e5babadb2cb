// fused_attention with dropout on the attention weights, applied inside the kernel's row blocks
// (ops/fused/fused_attention.cpp; the plain call is declared in autograd/functional.h).
//
//   FusedAttentionOutput a = fused_attention(qkv, qkv, qkv, spec, {.p = 0.1, .gen = &rng});
//   // a.out: (B,Tq,H*Dv) = merged heads of dropout(softmax(scale q k^T), p) v
//   // a.weights: (B,H,Tq,Tk) = the softmax rows before dropout, as sdpa returns them
//
// Replaces softmax -> dropout(weights, p, gen) -> matmul of the reference path and draws the same
// mask from the same generator state: one 64-bit seed from gen, element i of the (B,H,Tq,Tk)
// weights kept when Philox word i of that seed is at least p 2^32 (kernels/dropout_mask.h). The
// backward regenerates the mask row by row instead of storing it, and a causal row draws words
// only for the keys it sees.
#pragma once

#include "autograd/functional.h"
#include "autograd/generator.h"

namespace attn {

// Dropout of the attention weights: p in [0, 1]; gen is read only when p > 0 (one draw per call).
struct AttentionDropout {
  real p = 0;
  Generator* gen = nullptr;
};

FusedAttentionOutput fused_attention(const Var& q,
                                     const Var& k,
                                     const Var& v,
                                     const FusedAttentionSpec& spec,
                                     const AttentionDropout& dropout);

}  // namespace attn
