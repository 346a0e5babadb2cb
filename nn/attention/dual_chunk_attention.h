// Dual chunk attention (DCA; An et al. 2024, used by Qwen2.5 for long inputs): causal RoPE
// attention whose position indices are remapped chunk by chunk so that no query-key distance
// exceeds what the model saw in training — a training-free way to read longer inputs.
//
//   attn::nn::RopeAttention att(/*d_model=*/32, /*nhead=*/2, gen, /*train_len=*/64);
//   attn::Var y = att.forward(x);                      // plain RoPE, positions 0..T-1
//   att.set_positions(attn::nn::RopePositions::kDualChunk);
//   attn::Var z = att.forward(x_long);                 // DCA: distances stay below train_len
//
// With the training length L and chunk size s (default L/2), key j gets index j mod s, and the
// query index depends on where the key sits relative to the query i (same causal rule i >= j):
//   intra-chunk       (same chunk)            query index i mod s
//                     distance (i mod s) - (j mod s) = i - j exactly
//   successive-chunk  (key in the chunk just before)  query index min(s + i mod s, L - 1)
//                     distance s + (i mod s) - (j mod s) = i - j while below L: locality kept
//   inter-chunk       (key two or more chunks back)   query index L - 1 for every query
//                     distance L - 1 - (j mod s), in [L - s, L - 1]: "far", never beyond L - 1
// So every distance is in [0, L - 1], the range RoPE was trained on. With s = L/2 and T <= L
// there are no inter-chunk pairs and the successive distance is never capped: DCA is exactly
// plain RoPE on the inputs the model was trained on. What it trades away: beyond the previous
// chunk the model no longer knows how far back a key is (all far keys look L - s .. L - 1 away).
// Cost: three score matrices instead of one (intra, successive, inter), O(T^2) as attention.
//
// The rotation is RoPE's rotate-half form (pair (i, i + D/2)) written out in elementary ops,
// rope_at below, since each query row needs its own position; plain mode uses the rope op.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "nn/attention/projected_attention.h"

namespace attn::nn {

// RoPE (rotate-half, base 10000) with an explicit position per row:
// y = x cos(p theta) + rotate_half(x) sin(p theta), rotate_half(x) = [-x2, x1].
// x (...,T,D), D even, positions.size() == T -> (...,T,D).
Var rope_at(const Var& x, const std::vector<int64_t>& positions, double base = 10000.0);

// The (T,T) matrix of the relative distances (query index - key index) DCA uses for i >= j
// (0 above the diagonal), for a figure and the tests.
Tensor dual_chunk_distances(int64_t t, int64_t train_len, int64_t chunk);

enum class RopePositions { kPlain, kDualChunk };

// Causal multi-head attention with RoPE on q and k. Parameters q_proj, k_proj, v_proj, out_proj.
class RopeAttention : public ProjectedAttention {
 public:
  // chunk 0 means train_len / 2.
  RopeAttention(int64_t d_model,
                int64_t nhead,
                Generator& gen,
                int64_t train_len,
                int64_t chunk = 0,
                RopePositions positions = RopePositions::kPlain,
                bool bias = true);

  Var forward(const Var& x) const;  // x (B,T,d_model) -> (B,T,d_model), causal

  void set_positions(RopePositions p) { positions_ = p; }
  RopePositions positions() const { return positions_; }
  int64_t train_len() const { return train_len_; }
  int64_t chunk() const { return chunk_; }

 private:
  int64_t train_len_, chunk_;
  RopePositions positions_;
};

}  // namespace attn::nn
