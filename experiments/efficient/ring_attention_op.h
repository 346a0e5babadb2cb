// Ring attention: exact softmax attention over a sequence split across the ranks of a job.
// Rank r holds block r of the queries, keys and values (T/N positions each). Its key/value block
// travels round the ring (to rank r + 1, from rank r - 1) until every rank has seen every block,
// and each rank folds the blocks it receives into its own queries' output with the online
// softmax of blockwise attention (autograd/ops/fused/blockwise_attention.cpp): a running max m
// and sum l per query row, rescaled by exp(m - m') whenever a block raises the max. No rank
// ever holds more than one block of keys and values or a (rows x T/N) tile of scores.
//
//   Communicator& comm = attn::train::distributed::world();
//   RingCounters counters;
//   Var o = ring_attention(q, k, v, comm, /*query_rows=*/64, &counters);  // (H,T/N,D) each
//   sum(mul(o, Var::constant(d_out))).backward();  // q.grad(), k.grad(), v.grad(): this block's
//
// Backward is a second ring pass: each key/value block travels again, now with its gradient
// accumulators dK, dV; every rank adds its queries' share and passes them on, and after N steps
// each block's dK, dV arrive back at its owner. Bytes sent per rank, with P = H (T/N)(D + Dv) 4
// bytes (one key/value block): forward (N - 1) P, backward (2N - 1) P (N - 1 moves of keys,
// values and their gradients, and a last move of the gradients alone, home). Alone (a ring of
// one) nothing crosses a process boundary: 0 bytes.
#pragma once

#include <cstdint>

#include "autograd/functional.h"
#include "train/distributed/communicator.h"

namespace attn::experiments {

// Bytes this rank sent round the ring in the last forward and backward.
struct RingCounters {
  uint64_t forward_bytes = 0, backward_bytes = 0;
};

// q (H,Tb,D), k (H,Tb,D), v (H,Tb,Dv): this rank's block of each (the same Tb on every rank)
// -> o (H,Tb,Dv) = softmax(q K^T / sqrt(D)) V over the keys and values of all ranks. Not
// causal: every query sees every key. Queries are processed `query_rows` at a time.
Var ring_attention(const Var& q,
                   const Var& k,
                   const Var& v,
                   train::distributed::Communicator& comm,
                   int64_t query_rows = 64,
                   RingCounters* counters = nullptr);

// The bytes the formula above predicts for one forward and one backward on `ranks` ranks.
RingCounters ring_bytes_formula(int64_t heads, int64_t block_len, int64_t d, int64_t dv, int ranks);

}  // namespace attn::experiments
