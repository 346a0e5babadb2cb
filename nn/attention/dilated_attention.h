// Dilated (atrous) self-attention: each query reads keys at a fixed interval behind it — the
// sparse pattern of 004 §4.1's "atrous self-attention" and the dilated part of Longformer.
//
//   using namespace attn::nn;
//   Tensor m = dilated_mask(/*t=*/16, /*keys=*/4, /*dilations=*/{1, 2});  // (1,2,16,16), 1 =
//   hidden DilatedAttention da(/*d_model=*/32, /*nhead=*/2, /*keys=*/8, /*dilations=*/{2, 2}, gen);
//   AttentionOutput a = da.forward(x);   // x (B,T,32) -> out (B,T,32), weights (B,2,T,T)
//
// Head h with dilation r reads, from query i, the keys j = i - m r for m = 0 .. keys-1 (j >= 0):
// `keys` keys spread over (keys-1) r + 1 positions, so a dilation r reaches r times farther
// than a local window of the same number of keys, at the price of the positions in between
// (they reach query i only through another layer or another head). Dilation 1 is a causal
// local window of `keys` positions; Longformer mixes heads of dilation 1 with dilated heads, so
// the dilations are per head. This layer writes the pattern as a (1,H,T,T) mask over the full
// score matrix (clear, and gives the weights to plot): O(T^2) time and memory, the reference
// form of a sparse kernel that would touch only the T keys x keys entries.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "nn/attention/projected_attention.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

// (1,H,T,T) 0/1 mask, H = dilations.size(), 1 = hidden: head h's query i sees key j when
// d = i - j >= 0, d % dilations[h] == 0 and d / dilations[h] < keys. keys >= 1, dilations >= 1.
Tensor dilated_mask(int64_t t, int64_t keys, const std::vector<int64_t>& dilations);

// Causal multi-head self-attention restricted to the dilated pattern. Parameters q_proj, k_proj,
// v_proj, out_proj (projected_attention.h).
class DilatedAttention : public ProjectedAttention {
 public:
  DilatedAttention(int64_t d_model,
                   int64_t nhead,
                   int64_t keys,
                   std::vector<int64_t> dilations,
                   Generator& gen,
                   bool bias = true);

  AttentionOutput forward(const Var& x) const;  // x (B,T,d_model)

  int64_t keys() const { return keys_; }
  const std::vector<int64_t>& dilations() const { return dilations_; }

 private:
  int64_t keys_;
  std::vector<int64_t> dilations_;
};

}  // namespace attn::nn
