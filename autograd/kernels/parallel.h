// Threads: one OpenMP pool for our kernels; a BLAS call always computes on the calling thread.
//
//   attn::set_num_threads(2);                       // both cores (or ATTN_THREADS=2)
//   attn::kernels::parallel_for(rows, cols, [&](int64_t r) { ... one row ... });
//
// attnlab links the OpenMP build of OpenBLAS, which would cut a call made outside a parallel
// region over the OpenMP threads, and its bits follow the cut: kernels::gemm makes every call
// single-threaded and cuts a large product itself (gemm_split), into blocks that do not depend
// on the thread count (issue 32). Our loops and BLAS never oversubscribe the cores.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace attn {

// Sets OpenMP's and OpenBLAS's thread counts together. n <= 0 means "all cores".
void set_num_threads(int n);
int num_threads();
// The most threads --threads and ATTN_THREADS accept: OpenBLAS's limit (64 in Debian's build).
inline constexpr int kMaxThreads = 64;
// A thread count given as `source` ("--threads", "ATTN_THREADS"): a whole number in
// [0, kMaxThreads] (0 = all cores), else attn::UsageError saying why. The one rule for both.
int parse_threads(const std::string& text, const std::string& source = "--threads");
// Reads ATTN_THREADS (if set) with parse_threads and applies it; called once by the CLI and the
// tests.
void init_threads_from_env();

}  // namespace attn

namespace attn::kernels {

// Below this many scalar operations a loop runs serially: waking threads costs more.
inline constexpr int64_t kParallelThreshold = 1 << 15;

// The thread count that work splits which change the arithmetic are sized for (gemm_split's
// blocks, a triangle's row ranges, attention backward's jobs): a constant, never num_threads(),
// so the same additions happen in the same order at any thread count and the bits are the same
// (issue 32). 2: the cores of the machines measured (docs/performance.md).
inline constexpr int64_t kSplitThreads = 2;

// True inside a parallel_for (or run_pair) body, on every thread that runs it, also when the
// loop runs serially because it is small or only one thread is set. Kernels choose by it, never
// by omp_in_parallel(): a one-thread run opens no parallel region, so a choice made by
// omp_in_parallel() would differ between --threads 1 and 2 and so would the float bits
// (issue 32). A product called from a body takes the single-threaded path at any thread count.
// The flag is a thread_local in parallel.cpp, reached only through these two functions: an
// inline variable here would be defined again in the AVX2 and AVX-512 kernel copies'
// objects, which must define nothing outside their own namespace (scripts/check_isa_symbols).
bool in_parallel_body();
// Sets this thread's flag to `inside` and returns what it was.
bool exchange_in_parallel_body(bool inside);

// Marks the current thread as running a parallel body for its lifetime (restoring the previous
// state, so nested bodies work).
class ParallelBody {
 public:
  ParallelBody() : outer_(exchange_in_parallel_body(true)) {}
  ~ParallelBody() { exchange_in_parallel_body(outer_); }
  ParallelBody(const ParallelBody&) = delete;
  ParallelBody& operator=(const ParallelBody&) = delete;

 private:
  bool outer_;
};

// Calls body(i) for i in [0, n); in parallel when n * work_per_item is large enough.
// Small loops never touch OpenMP: even a one-thread `omp parallel if(false)` region costs
// about a microsecond, more than a whole small op should. Nor does any loop on a thread set to
// one thread (--threads 1, or a job of experiments/kit/side_by_side.h).
template <class Body>
void parallel_for(int64_t n, int64_t work_per_item, Body&& body) {
  if (n * work_per_item < kParallelThreshold || n < 2 || num_threads() < 2) {
    const ParallelBody mark;
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel
  {
    const ParallelBody mark;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) body(i);
  }
}

// Runs two independent jobs at once, one per thread, when no parallel body is running yet and
// each job is worth a thread (work scalar operations); otherwise one after the other (each may
// then use every thread). For pairs of products of the same size, a linear layer's input and
// weight gradients: each on one core, instead of each split across both with a barrier and
// shared packing per product. Whether the jobs pair up does not depend on the thread count
// (only on where and how large), and paired jobs run as parallel bodies even on one thread, so
// their kernels are the same at any thread count.
inline bool runs_as_pair(int64_t work) {
  return !in_parallel_body() && work >= 16 * kParallelThreshold;
}

template <class A, class B>
void run_pair(int64_t work, A&& a, B&& b) {
  if (!runs_as_pair(work)) {
    a();
    b();
    return;
  }
  if (num_threads() < 2) {
    const ParallelBody mark;
    a();
    b();
    return;
  }
#pragma omp parallel num_threads(2)
  {
    const ParallelBody mark;
    if (omp_get_thread_num() == 0)
      a();
    else
      b();
  }
}

// Elements per parallel_chunks item: long enough for the inner loop to vectorise.
inline constexpr int64_t kChunk = 1024;

// Calls body(begin, count) for the chunks [begin, begin + count) of [0, n), in parallel when
// n * work_per_element is large. For element-wise loops: the chunks do not depend on the
// thread count, so neither does the result.
template <class Body>
void parallel_chunks(int64_t n, int64_t work_per_element, Body&& body) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, kChunk * work_per_element, [&](int64_t i) {
    const int64_t begin = i * kChunk;
    body(begin, std::min(kChunk, n - begin));
  });
}

// For sums where many rows add into the same outputs (a bias gradient, an embedding's
// scatter-add): the threads split the `cols` columns into blocks of kColumnBlock and each calls
// body(j0, j1) for its blocks, walking all rows itself. Every element is summed in row order
// whatever the thread count, so the result stays bit-identical.
inline constexpr int64_t kColumnBlock = 64;

template <class Body>
void parallel_column_blocks(int64_t cols, int64_t rows, Body&& body) {
  const int64_t blocks = (cols + kColumnBlock - 1) / kColumnBlock;
  parallel_for(blocks, rows * kColumnBlock, [&](int64_t b) {
    const int64_t j0 = b * kColumnBlock;
    body(j0, std::min(cols, j0 + kColumnBlock));
  });
}

}  // namespace attn::kernels
