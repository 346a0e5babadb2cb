// Rotary position embedding (RoPE) for the queries and keys of attention.
//
//   using attn::nn::RopeStyle;
//   attn::Var q2 = attn::nn::apply_rope(q, 0, RopeStyle::kRotateHalf);  // q (B,H,T,D), D even
//   attn::Var k2 = attn::nn::apply_rope(k, 0, RopeStyle::kRotateHalf);
//   // decoding step t with a KV cache: apply_rope(q_step, /*start_pos=*/t, ...)
//
// Each pair of channels of the row at position p is rotated by the angle p * base^(-2i/D). A
// rotation keeps lengths, and R(p)^T R(p') = R(p' - p), so the score <R(p) q, R(p') k> depends on
// the positions only through their difference: attention sees relative positions while every
// token still carries its absolute one. Which channels form a pair is the style:
//   kRotateHalf  (i, i + D/2)  GPT-NeoX, Hugging Face llama checkpoints
//   kInterleaved (2i, 2i + 1)  RoFormer, Meta's original llama (complex-number view)
// The kernel is the fused op attn::rope (autograd/ops/rope.cpp); backward rotates by -theta.
#pragma once

#include <cstdint>

#include "autograd/functional.h"

namespace attn::nn {

using attn::RopeStyle;

// x (B,H,T,D) (any rank >= 2 with the positions on axis -2), D even -> same shape. Row t has
// position start_pos + t.
Var apply_rope(const Var& x, int64_t start_pos, RopeStyle style, double base = 10000.0);

}  // namespace attn::nn
