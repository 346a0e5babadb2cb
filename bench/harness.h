// Timing one benchmark case: warm-up steps, then timed steps, summarised.
//
//   BenchCase c{"W3", "attention fwd T=256", flops_per_step, tokens_per_step, [&] { step(); }};
//   CaseResult r = measure(c, /*warmup=*/3, /*steps=*/20);
//   r.median_ms; r.gflops; r.tokens_per_s; r.peak_tensor_bytes;
//   r.gflops_per_cpu_s;   // the rate per second of CPU time, to read against the FMA peak
//
// Each step is timed on its own with a steady clock, so the median ignores the steps that
// another process on the machine interrupted. FLOPs are counted by the workload from the
// shapes (GEMM FLOPs, 2 m n k each), never sampled.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn::bench {

struct BenchCase {
  std::string workload;            // "W3"
  std::string name;                // "attention fwd+bwd T=256"
  double flops = 0;                // counted FLOPs of one step (0: not reported)
  double tokens = 0;               // tokens processed by one step (0: not reported)
  int max_steps = 0;               // > 0: time at most this many steps (very long cases)
  std::function<void()> step;      // one step; must leave no state that grows step after step
  std::function<void()> setup;     // optional: builds the model etc. right before measuring
  std::function<void()> teardown;  // optional: frees it afterwards
};

struct CaseResult {
  std::string workload, name;
  int steps = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double gflops = 0;  // counted FLOPs / median time
  double cpu_ms = 0;  // CPU time of the process per timed step (all threads; mean over steps)
  double gflops_per_cpu_s = 0;    // counted FLOPs / cpu_ms: what one core gives while it is ours
  double tokens_per_s = 0;        // tokens / median time
  int64_t peak_tensor_bytes = 0;  // most tensor memory alive at once during the case
  int64_t peak_rss_bytes = 0;     // the process's peak resident set so far (monotonic)
};

CaseResult measure(const BenchCase& c, int warmup, int steps);

// The process's peak resident set size (getrusage), in bytes.
int64_t peak_rss_bytes();

}  // namespace attn::bench
