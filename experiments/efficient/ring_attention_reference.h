// What ring-attention compares its ring against: the same attention and gradients computed in
// one process, in float32 (the textbook ops) and in float64 (plain loops, the rounding-free
// yardstick that sets the tolerance), and the gather that brings every rank's block together.
//
//   AttentionValues ref = attention_in_double(q, k, v, d_out);   // (H,T,D) inputs, dO (H,T,Dv)
//   AttentionValues one = attention_in_float(q, k, v, d_out);    // attention_steps + backward
//   Tensor whole = gather_blocks(comm, my_block, "outputs");     // (H,Tb,C) -> (H,T,C)
#pragma once

#include <cstdint>

#include "autograd/tensor.h"
#include "train/distributed/communicator.h"

namespace attn::experiments {

// Outputs o = softmax(q k^T / sqrt(D)) v and the gradients of sum(o * d_out), each (H,T,.),
// held as float64 values in float-shaped order (converted to Tensor only for comparisons).
struct AttentionValues {
  std::vector<double> o, dq, dk, dv;
};

// Plain loops in double precision, non-causal, every head on its own.
AttentionValues attention_in_double(const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    const Tensor& d_out);
// The one-process float32 attention a student reads: attention_steps (matmul, scale, softmax,
// matmul) and one backward of sum(o * d_out).
AttentionValues attention_in_float(const Tensor& q,
                                   const Tensor& k,
                                   const Tensor& v,
                                   const Tensor& d_out);

// Rank r's rows [r Tb, (r + 1) Tb) of every head of x (H,T,C) -> (H,Tb,C).
Tensor block_of_rank(const Tensor& x, int rank, int ranks);
// The inverse, on every rank: each rank's block (H,Tb,C) placed in a zero (H,T,C) tensor and
// the tensors summed over the ranks (every entry is one rank's value plus zeros: exact).
Tensor gather_blocks(train::distributed::Communicator& comm, const Tensor& block, const char* what);

}  // namespace attn::experiments
