// Titans' other two placements of the long-term memory (Behrouz et al. 2024; document 004 §4.2),
// beside memory as context (TitansMemoryAttention, titans_memory.h):
//
//   using namespace attn::nn;
//   TitansGateAttention mag({.d_model = 32, .nhead = 2, .segment = 6, .window = 4}, gen);
//   TitansLayerAttention mal({.d_model = 32, .nhead = 2, .segment = 6, .window = 4,
//                             .memory_depth = 2}, gen);   // a two-layer (MLP) memory
//   Var y = mag.forward(x);   // x (B,T,32) -> (B,T,32), causal; the same for mal
//
// Both pair causal sliding-window attention (the short-term memory: exact, but only the last
// `window` + 1 rows) with the long-term memory of LongTermMemory, read segment by segment from
// what the EARLIER segments wrote (LongTermMemory::read_segments):
//   memory as a gate (MAG): two branches side by side, mixed channel by channel by a gate
//       s = SWA(x),  m = M(x),  g = sigmoid(x W_g + b_g),  y = g * s + (1 - g) * m
//   memory as a layer (MAL): the memory first, then attention over its output
//       h = x + M(x),  y = SWA(h)
// (x is the block's normalised input; M(x) is the memory read for each row.) MAG lets each
// channel choose between the window's exact tokens and the memory's summary of everything
// older; MAL hands the memory's reads to attention as part of each row, so attention can use
// them only through its window. Titans' persistent tokens belong to MAC here (MAG and MAL have
// none), so the three placements differ in where the memory enters and nothing else.
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/attention/sliding_window.h"
#include "nn/attention/titans_memory.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

struct TitansHybridOptions {
  int64_t d_model = 32, nhead = 2;
  int64_t segment = 16;  // rows per memory segment (the memory is written after each)
  int64_t window = 8;    // causal sliding window: row i sees rows i - window .. i
  int64_t memory_depth = 1, memory_hidden = 0;  // MemoryOptions::depth and ::hidden
  bool bias = true;                             // of the attention's projections and the gate
};

// Memory as a gate (MAG).
class TitansGateAttention : public Module, public LongTermMemory {
 public:
  TitansGateAttention(const TitansHybridOptions& o, Generator& gen);
  Var forward(const Var& x) const;  // (B,T,d_model) -> (B,T,d_model)
  // The gate g (B,T,d_model) for x: the share of the attention branch, channel by channel.
  Var gate_values(const Var& x) const;
  const TitansHybridOptions& options() const { return o_; }

  std::shared_ptr<SlidingWindowAttention> swa;
  std::shared_ptr<Linear> gate;

 private:
  TitansHybridOptions o_;
};

// Memory as a layer (MAL).
class TitansLayerAttention : public Module, public LongTermMemory {
 public:
  TitansLayerAttention(const TitansHybridOptions& o, Generator& gen);
  Var forward(const Var& x) const;  // (B,T,d_model) -> (B,T,d_model)
  const TitansHybridOptions& options() const { return o_; }

  std::shared_ptr<SlidingWindowAttention> swa;

 private:
  TitansHybridOptions o_;
};

}  // namespace attn::nn
