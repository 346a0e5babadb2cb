// The fused ops that apply dropout inside themselves, for the layers' fast path: dropout of
// attention's weights inside fused_attention, and of a GELU feed-forward's hidden activations
// inside gelu_linear (the plain calls are declared in autograd/functional.h).
//
//   Generator rng(1);
//   FusedAttentionOutput a = fused_attention(qkv, qkv, qkv, spec, {.p = 0.1, .gen = &rng});
//   // a.out: (B,Tq,H*Dv) = merged heads of dropout(softmax(scale q k^T), p) v
//   // a.weights: (B,H,Tq,Tk) = the softmax rows before dropout, as sdpa returns them
//   Var y = gelu_linear(h, w, b, GeluApprox::kNone, {.p = 0.1, .gen = &rng});
//   // y = dropout(gelu(h), p) W^T + b
//
// Each replaces a dropout op between two others of the reference path (softmax -> dropout ->
// matmul; gelu -> dropout -> linear) and draws the same mask from the same generator state: one
// 64-bit seed from gen, element i of the dropped tensor (its flat index) kept when Philox word i
// of that seed is at least p 2^32 (kernels/dropout_mask.h). fused_attention regenerates the mask
// row by row in its backward instead of storing it, and a causal row draws words only for the
// keys it sees; gelu_linear folds the mask into the GELU derivative it keeps anyway.
#pragma once

#include <fmt/format.h>

#include <optional>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/generator.h"

namespace attn {

// Dropout inside a fused op, in training: p in [0, 1]; gen is read only when p > 0 (one draw per
// call). p = 0 is the op without dropout.
struct FusedDropout {
  real p = 0;
  Generator* gen = nullptr;
};

// Throws attn::Error naming `op` unless p is in [0, 1], with a generator when p > 0.
inline void check_fused_dropout(const char* op, const FusedDropout& dropout) {
  if (!(dropout.p >= 0 && dropout.p <= 1) || (dropout.p > 0 && !dropout.gen))
    throw Error(fmt::format(
        "{}: dropout p must be a probability in [0, 1], with a generator when p > 0; got p = {}{}",
        op, dropout.p, dropout.gen ? "" : " and no generator"));
}

FusedAttentionOutput fused_attention(const Var& q,
                                     const Var& k,
                                     const Var& v,
                                     const FusedAttentionSpec& spec,
                                     const FusedDropout& dropout);

Var gelu_linear(const Var& x,
                const Var& weight,
                const std::optional<Var>& bias,
                GeluApprox approx,
                const FusedDropout& dropout);

}  // namespace attn
