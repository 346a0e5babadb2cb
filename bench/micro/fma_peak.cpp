// The CPU's fused multiply-add peak, to read a kernel's GFLOP/s against (issue 30):
//
//   build/release/attn_fma_peak             # AVX2 and AVX-512 (where the CPU has them), 1 and
//                                           # all threads, in GFLOP/s (an FMA counts 2 flops)
//   build/release/attn_fma_peak --json      # the same as one JSON object (bench/peak_fraction.py)
//
// Each thread runs 12 independent chains of vfmadd on registers (no memory traffic): enough in
// flight to cover the FMA latency (4-5 cycles) on two pipes. The best of 5 runs. GFLOP/s are
// per second of CPU time the process got (CLOCK_PROCESS_CPUTIME_ID) times the threads: what the
// cores give when they are ours, also on a machine other work shares (wall time would count the
// time slices others took). Compare with CPU-time rates of the workloads.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace {

constexpr int kChains = 12;
constexpr long kIterations = 10'000'000;

// Returns a sum of the chains so the compiler cannot drop them.
__attribute__((target("avx2,fma"))) float fma_chains_avx2(long iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(float(c));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) float fma_chains_avx512(long iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(float(c));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 s = acc[0];  // every chain feeds the result, or the compiler drops the unused ones
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  // Stored and read back rather than _mm512_reduce_add_ps: GCC 12's version of that intrinsic
  // reads an undefined vector and warns -Wuninitialized (GCC bug 105593).
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  return out[0];
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// GFLOP/s of `threads` threads each running chains(kIterations) with `lanes` floats per FMA.
double peak(float (*chains)(long), int lanes, int threads) {
  double best = 0;
  volatile float sink = 0;
  for (int run = 0; run < 5; ++run) {
    const double t0 = cpu_seconds();
#pragma omp parallel num_threads(threads)
    sink = sink + chains(kIterations);
    const double per_thread = (cpu_seconds() - t0) / threads;
    best = std::max(best, 2.0 * lanes * kChains * double(kIterations) * threads / per_thread / 1e9);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
  const int all = omp_get_max_threads();
  struct Row {
    const char* isa;
    double one, every;
  };
  Row rows[2];
  int n = 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    rows[n++] = {"avx2", peak(fma_chains_avx2, 8, 1), peak(fma_chains_avx2, 8, all)};
  if (__builtin_cpu_supports("avx512f"))
    rows[n++] = {"avx512", peak(fma_chains_avx512, 16, 1), peak(fma_chains_avx512, 16, all)};
  if (json) {  // {"threads": 2, "avx2": {"1": ..., "all": ...}, ...}: GFLOP/s per CPU second
    std::printf("{\"threads\": %d", all);
    for (int i = 0; i < n; ++i)
      std::printf(", \"%s\": {\"1\": %.2f, \"all\": %.2f}", rows[i].isa, rows[i].one,
                  rows[i].every);
    std::printf("}\n");
    return 0;
  }
  std::printf("%-8s %12s %12s\n", "FMA", "1 thread", "all threads");
  for (int i = 0; i < n; ++i)
    std::printf("%-8s %12.1f %12.1f  GFLOP/s (%d threads)\n", rows[i].isa, rows[i].one,
                rows[i].every, all);
  return 0;
}
