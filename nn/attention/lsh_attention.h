// Reformer's LSH attention (Kitaev et al. 2020): queries attend only to keys that hash into the
// same neighbourhood, found by sorting positions by a locality-sensitive hash.
//
//   attn::nn::LshAttention lsh(/*d_model=*/32, /*nhead=*/2, /*buckets=*/8, /*chunk=*/16, gen);
//   attn::Var y = lsh.forward(x);   // x (B,T,32) -> (B,T,32)
//
// Per head (shared QK: the keys are the queries, normalised):
//   qk = x Wqk, v = x Wv                                          (B,H,T,Dh)
//   bucket_t = argmax([qk_t R, -qk_t R])   R (Dh, buckets/2) fixed random rotations
//     (vectors at a small angle land in the same bucket with high probability)
//   sort the positions by (bucket, position)          a permutation gather (embedding op)
//   cut the sorted order into chunks of `chunk`; a query attends to the keys of its chunk and of
//     the previous chunk: scores q_i . k_j / sqrt(Dh), k_j = qk_j / |qk_j|
//   a query never attends to itself unless nothing else is visible (its score is replaced by
//     -1e5, as in the paper: with shared QK, q . k for itself would dominate), causal: keys at
//     later original positions are hidden
//   y = softmax(scores) v, unsorted back to the original order (the inverse gather)
//
// Time and memory O(T chunk) (plus the sort). What it trades away: the hash is not
// differentiable, so nothing teaches the projection to put the right pairs together except the
// attention within the buckets it happened to form; a key in another bucket is invisible
// however relevant; with shared QK a token cannot look for something unlike itself (e.g. the
// previous token whatever it is). One hash round (the paper uses several and averages).
// Causal hides later keys, so no output reads a later position's value; but which earlier keys
// share a query's chunk depends on where every token hashed, later ones included — as in
// Reformer, so for language modelling the layout itself lets a little of the future through.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/generator.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

// The sorted layout of one forward pass, for (B*H) rows of T positions padded to n_chunks*chunk
// slots: order[r][s] is the position in slot s (s < T), slot_of[r][t] the inverse.
struct LshLayout {
  int64_t rows = 0, t = 0, chunk = 0, n_chunks = 0;
  std::vector<std::vector<int64_t>> order, slot_of, bucket;
};

// buckets (B*H rows, T) from qk values (rows, T, Dh) and rotations (Dh, n_buckets/2).
LshLayout lsh_layout(const Tensor& qk, const Tensor& rotations, int64_t chunk);

// Parameters: qk_proj, v_proj, out_proj (Linear (d_model, d_model)); buffer rotations
// (Dh, n_buckets/2), drawn N(0,1) at construction and fixed.
class LshAttention : public Module {
 public:
  LshAttention(int64_t d_model,
               int64_t nhead,
               int64_t n_buckets,
               int64_t chunk,
               Generator& gen,
               bool causal = false,
               bool bias = true);

  Var forward(const Var& x) const;  // x (B,T,d_model) -> (B,T,d_model)
  // The layout of the last forward (for a figure or a test).
  const LshLayout& last_layout() const { return last_; }

  std::shared_ptr<Linear> qk_proj, v_proj, out_proj;

 private:
  int64_t d_model_, nhead_, n_buckets_, chunk_;
  bool causal_;
  Tensor rotations_;
  mutable LshLayout last_;
};

}  // namespace attn::nn
