// Blockwise (memory-efficient, FlashAttention-style) attention as a layer.
//
//   using namespace attn::nn;
//   Var y = attn::blockwise_attention(q, k, v, /*causal=*/true, /*block_size=*/64);  // the op
//   BlockwiseAttention layer(/*d_model=*/64, /*nhead=*/4, gen, /*causal=*/true, /*block=*/64);
//   Var out = layer.forward(x);                      // x (B,T,64) -> (B,T,64)
//
// The op (autograd/ops/fused/blockwise_attention.cpp, declared in autograd/functional.h) computes
// softmax(q k^T / sqrt(D)) v tile by tile with an online softmax: the T x T score matrix is never
// stored, forward or backward. It saves only the output and one log-sum-exp per query row, and
// backward recomputes each tile's probabilities from them. So its memory beyond the inputs and
// outputs grows like T, while the plain composition (matmul -> softmax -> matmul) keeps several
// T x T tensors alive on the tape. Same values as sdpa up to rounding (tests check <= 1e-5).
//
// Parameters q_proj, k_proj, v_proj, out_proj (see projected_attention.h), so a
// BlockwiseAttention and a LinearAttention with the same config load the same checkpoint.
#pragma once

#include <cstdint>

#include "autograd/functional.h"
#include "nn/attention/projected_attention.h"

namespace attn::nn {

class BlockwiseAttention : public ProjectedAttention {
 public:
  BlockwiseAttention(int64_t d_model,
                     int64_t nhead,
                     Generator& gen,
                     bool causal = false,
                     int64_t block_size = 64,
                     bool bias = true);

  Var forward(const Var& x) const;  // x (B,T,d_model) -> (B,T,d_model)

  bool causal() const { return causal_; }
  int64_t block_size() const { return block_; }

 private:
  bool causal_;
  int64_t block_;
};

}  // namespace attn::nn
