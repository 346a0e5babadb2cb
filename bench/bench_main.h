// `attnlab bench`: times the performance workloads and prints (or writes as JSON) the results.
//
//   attn::bench::BenchOptions opt;
//   opt.workload = "W3";      // W1..W7, W2r, W4d, W9..W11, or "all" (all but W7)
//   opt.threads = 1;          // 0 = every core
//   opt.json = true;          // one JSON document on stdout instead of the table
//   return attn::bench::run_bench_command(opt);   // 0 ok, 2 bad usage
//
// The CLI (experiments/cli) parses `attnlab bench [--workload W] [--threads N] [--json]
// [--steps N] [--warmup N]` into BenchOptions and calls run_bench_command. scripts/bench runs
// it interleaved with bench/torch_reference.py and prints ratios.
#pragma once

#include <string>

namespace attn::bench {

struct BenchOptions {
  std::string workload = "all";  // W1..W7, W2r, W4d, W9..W11 or all = all but W7 (case-insensitive)
  std::string filter;            // only cases whose name contains this (e.g. "T=256")
  int threads = 0;               // 0: all cores (or ATTN_THREADS when set)
  int steps = 20;                // timed steps per case (median/min/max over these)
  int warmup = 3;                // untimed steps first (buffers, caches, optimizer state)
  bool json = false;             // print JSON instead of a table
};

// Runs the selected workloads and prints the results. Returns the process exit code; throws
// attn::UsageError for an unknown workload.
int run_bench_command(const BenchOptions& options);

}  // namespace attn::bench
