// S6's two scans side by side: nn::SelectiveSSM forced to the sequential tape scan (the textbook
// recurrence, one small op per time step: nn/ssm/selective_scan_reference.h) and to the fused
// chunked scan (autograd/ops/fused/selective_scan.cpp), with the same weights and input.
//
//   ScanResult r = scan_part(cfg, ctx);   // selective-ssm's part 2 at each of --scan_lengths
//   r.output_diff;       // max |y_sequential - y_chunked| / max |y|, the largest over the T
//   r.gradient_diff;     // the same over the input and every parameter's gradient
//   r.sequential_ms;     // one forward + backward per T, median of interleaved rounds
//
// The loss is sum(y * w) with a fixed random w, so every output position sends a gradient back
// and the gradients are those of a generic loss. The two layers are built from one seed, so their
// parameters are identical (checked).
#pragma once

#include <vector>

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

struct ScanResult {
  std::vector<double> ts, sequential_ms, chunked_ms;
  double output_diff = 0, gradient_diff = 0;       // the largest, relative to the values' size
  double chunked_slope = 0, sequential_slope = 0;  // log-log slopes of the time, last two T
};

// Prints the section, table, note and figure and records the results (scan_*).
ScanResult scan_part(const Config& cfg, RunContext& ctx);

}  // namespace attn::experiments
