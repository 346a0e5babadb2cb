#include "bench/harness.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "autograd/kernels/buffer_pool.h"
#include "autograd/tape.h"

namespace attn::bench {

namespace {

// CPU time of the whole process (every thread), in seconds: on a machine that other jobs share,
// the time slices they take are not counted, so a rate per CPU second compares with the FMA
// peak of bench/micro/fma_peak.cpp, which is measured the same way.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

CaseResult measure(const BenchCase& c, int warmup, int steps) {
  using Clock = std::chrono::steady_clock;
  if (c.max_steps > 0) {
    steps = std::min(steps, c.max_steps);
    warmup = std::min(warmup, 1);
  }
  if (c.setup) c.setup();
  kernels::reset_pool_peak();
  for (int i = 0; i < warmup; ++i) c.step();
  std::vector<double> ms;
  ms.reserve(steps);
  const double cpu_start = process_cpu_seconds();
  for (int i = 0; i < steps; ++i) {
    const auto t0 = Clock::now();
    c.step();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  const double cpu_seconds = process_cpu_seconds() - cpu_start;
  tape().clear();  // a forward-only case leaves its last graph behind
  CaseResult r;
  r.workload = c.workload;
  r.name = c.name;
  r.steps = steps;
  r.peak_tensor_bytes = kernels::pool_stats().peak_live_bytes;
  if (c.teardown) c.teardown();
  kernels::pool_trim();
  r.peak_rss_bytes = peak_rss_bytes();
  if (ms.empty()) return r;
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  r.median_ms = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  r.min_ms = ms.front();
  r.max_ms = ms.back();
  r.cpu_ms = 1e3 * cpu_seconds / static_cast<double>(n);
  if (cpu_seconds > 0) r.gflops_per_cpu_s = c.flops * static_cast<double>(n) / cpu_seconds * 1e-9;
  if (r.median_ms > 0) {
    r.gflops = c.flops / (r.median_ms * 1e-3) * 1e-9;
    r.tokens_per_s = c.tokens / (r.median_ms * 1e-3);
  }
  return r;
}

}  // namespace attn::bench
