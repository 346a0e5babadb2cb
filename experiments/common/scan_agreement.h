// S6's two scans side by side: nn::SelectiveSSM forced to the sequential tape scan (the textbook
// recurrence, one small op per time step: nn/ssm/selective_scan_reference.h) and to the fused
// chunked scan (autograd/ops/fused/selective_scan.cpp), with the same weights and input.
//
//   ScanAgreement a = compare_scans(32, {.d_state = 16}, /*batch=*/2, /*t=*/256, /*seed=*/7, 5);
//   a.output_diff;       // max |y_sequential - y_chunked|
//   a.gradient_diff;     // max over the input and every parameter of max |g_seq - g_chunked|
//   a.sequential_ms;     // one forward + backward, median of interleaved rounds
//
// The loss is sum(y * w) with a fixed random w, so every output position sends a gradient back
// and the gradients are those of a generic loss. The two layers are built from one seed, so their
// parameters are identical (checked).
#pragma once

#include <cstdint>

#include "nn/ssm/selective_ssm.h"

namespace attn::experiments {

struct ScanAgreement {
  double output_diff = 0, gradient_diff = 0;
  double output_scale = 0, gradient_scale = 0;  // max |y|, max |g| (what the differences are of)
  double sequential_ms = 0, chunked_ms = 0;     // median forward + backward
};

ScanAgreement compare_scans(int64_t d_model,
                            nn::SelectiveSsmOptions options,
                            int64_t batch,
                            int64_t t,
                            uint64_t seed,
                            int reps);

}  // namespace attn::experiments
