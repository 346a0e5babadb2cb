// Micro-benchmarks of the autograd core (Google Benchmark). Not tests: nothing here asserts a time.
//
//   attn_microbench                                  # all, threads from ATTN_THREADS (default all)
//   ATTN_THREADS=1 attn_microbench --benchmark_filter='sgemm|matmul'
//
// - matmul through the tape (forward, forward+backward) against raw cblas_sgemm doing the same
//   FLOPs with the same threads: the gap is what the tape costs on top of BLAS.
// - softmax / layer_norm forward and forward+backward in GB/s (bytes each kernel must touch).
// - tape overhead: a chain of ops on 1-element tensors, so the arithmetic is free and the time
//   is all bookkeeping (allocating the Op, the output Node and Storage, recording, replaying).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/philox.h"
#include "autograd/kernels/vec_math.h"

namespace {

using namespace attn;

Tensor random_tensor(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return Tensor::randn(shape, gen);
}

void set_flops(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void set_bytes(benchmark::State& state, double bytes_per_iter) {
  state.counters["GB/s"] =
      benchmark::Counter(bytes_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Nanoseconds per op: kInvert turns "ops per second" into "seconds per op", scaled by 1e9.
void set_ns_per_op(benchmark::State& state, int ops_per_iter) {
  state.counters["ns/op"] =
      benchmark::Counter(ops_per_iter * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                  benchmark::Counter::kInvert);
}

// ---- matmul ------------------------------------------------------------------------------------

// C (n,n) = A B: the reference the tape is measured against.
void BM_sgemm_raw(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = random_tensor({n, n}, 1), b = random_tensor({n, n}, 2), c = Tensor::empty({n, n});
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a.data(), n, b.data(), n, 0,
                c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  set_flops(state, 2.0 * n * n * n);
}

// The three GEMMs of a forward+backward (C = A B, dA = dC B^T, dB = A^T dC), raw.
void BM_sgemm_raw_x3(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = random_tensor({n, n}, 1), b = random_tensor({n, n}, 2), g = random_tensor({n, n}, 3);
  Tensor c = Tensor::empty({n, n}), da = Tensor::empty({n, n}), db = Tensor::empty({n, n});
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a.data(), n, b.data(), n, 0,
                c.data(), n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1, g.data(), n, b.data(), n, 0,
                da.data(), n);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, n, 1, a.data(), n, g.data(), n, 0,
                db.data(), n);
    benchmark::DoNotOptimize(db.data());
  }
  set_flops(state, 3 * 2.0 * n * n * n);
}

void BM_matmul_tape_fwd(benchmark::State& state) {
  const int64_t n = state.range(0);
  Var a = Var::parameter(random_tensor({n, n}, 1)), b = Var::parameter(random_tensor({n, n}, 2));
  for (auto _ : state) {
    Var y = matmul(a, b);  // recorded: the op, its saved inputs and output Node
    benchmark::DoNotOptimize(y.value().data());
    tape().clear();
  }
  set_flops(state, 2.0 * n * n * n);
}

void BM_matmul_tape_fwd_bwd(benchmark::State& state) {
  const int64_t n = state.range(0);
  Var a = Var::parameter(random_tensor({n, n}, 1)), b = Var::parameter(random_tensor({n, n}, 2));
  const Tensor g = random_tensor({n, n}, 3);
  for (auto _ : state) {
    a.zero_grad();
    b.zero_grad();
    matmul(a, b).backward(g);  // includes copying g into the output's gradient
    benchmark::DoNotOptimize(b.grad().data());
  }
  set_flops(state, 3 * 2.0 * n * n * n);
}

// ---- softmax and layer norm ------------------------------------------------------------------
// Bytes: forward reads x and writes y (2 n floats); backward reads y and dy and writes dx (3 n).

void BM_softmax_fwd(benchmark::State& state) {
  const int64_t rows = state.range(0), c = state.range(1);
  Var x = Var::parameter(random_tensor({rows, c}, 1));
  for (auto _ : state) {
    Var y = softmax(x);
    benchmark::DoNotOptimize(y.value().data());
    tape().clear();
  }
  set_bytes(state, 2.0 * rows * c * sizeof(real));
}

void BM_softmax_fwd_bwd(benchmark::State& state) {
  const int64_t rows = state.range(0), c = state.range(1);
  Var x = Var::parameter(random_tensor({rows, c}, 1));
  const Tensor g = random_tensor({rows, c}, 2);
  for (auto _ : state) {
    x.zero_grad();
    softmax(x).backward(g);
    benchmark::DoNotOptimize(x.grad().data());
  }
  set_bytes(state, 5.0 * rows * c * sizeof(real));
}

void BM_layer_norm_fwd(benchmark::State& state) {
  const int64_t rows = state.range(0), c = state.range(1);
  Var x = Var::parameter(random_tensor({rows, c}, 1));
  Var w = Var::parameter(Tensor::ones({c})), b = Var::parameter(Tensor::zeros({c}));
  for (auto _ : state) {
    Var y = layer_norm(x, w, b);
    benchmark::DoNotOptimize(y.value().data());
    tape().clear();
  }
  set_bytes(state, 2.0 * rows * c * sizeof(real));
}

void BM_layer_norm_fwd_bwd(benchmark::State& state) {
  const int64_t rows = state.range(0), c = state.range(1);
  Var x = Var::parameter(random_tensor({rows, c}, 1));
  Var w = Var::parameter(Tensor::ones({c})), b = Var::parameter(Tensor::zeros({c}));
  const Tensor g = random_tensor({rows, c}, 2);
  for (auto _ : state) {
    x.zero_grad();
    w.zero_grad();
    b.zero_grad();
    layer_norm(x, w, b).backward(g);
    benchmark::DoNotOptimize(x.grad().data());
  }
  // backward reads x (or the normalised x), dy, and writes dx: counted like softmax's.
  set_bytes(state, 5.0 * rows * c * sizeof(real));
}

// The softmax inner loops alone, without the tape: libm's std::exp per element (the loop
// SoftmaxOp uses) against kernels::softmax_row (vectorised vexp). Rows of 512, single thread.
void BM_softmax_rows_std_exp(benchmark::State& state) {
  const int64_t rows = 4096, c = 512;
  const Tensor x = random_tensor({rows, c}, 1);
  Tensor y = Tensor::empty({rows, c});
  for (auto _ : state) {
    for (int64_t r = 0; r < rows; ++r) {
      const real* xr = x.data() + r * c;
      real* yr = y.data() + r * c;
      const real m = *std::max_element(xr, xr + c);
      real total = 0;
      for (int64_t j = 0; j < c; ++j) total += (yr[j] = std::exp(xr[j] - m));
      const real inv = 1 / total;
      for (int64_t j = 0; j < c; ++j) yr[j] *= inv;
    }
    benchmark::DoNotOptimize(y.data());
  }
  set_bytes(state, 2.0 * rows * c * sizeof(real));
}

void BM_softmax_rows_vexp(benchmark::State& state) {
  const int64_t rows = 4096, c = 512;
  const Tensor x = random_tensor({rows, c}, 1);
  Tensor y = Tensor::empty({rows, c});
  for (auto _ : state) {
    for (int64_t r = 0; r < rows; ++r) kernels::softmax_row(x.data() + r * c, y.data() + r * c, c);
    benchmark::DoNotOptimize(y.data());
  }
  set_bytes(state, 2.0 * rows * c * sizeof(real));
}

// ---- tape overhead ---------------------------------------------------------------------------
// A chain of kOps dependent ops on 1-element tensors: the arithmetic costs nothing, so the time
// per op is the tape's bookkeeping. Reported as ns per op (forward, or forward + backward) of
// this thread's CPU time: single-threaded work, so CPU time is the honest measure on a machine
// shared with other jobs, where wall time also counts waiting for a core.
constexpr int kOps = 100;

// One forward+backward of the chain; also run alone by `attn_microbench --count-tape N` so
// callgrind can count instructions per op (repeatable where wall time on a shared machine is not).
void tape_chain_step(const Var& x, const Var& w) {
  Var h = x;
  for (int i = 0; i < kOps; ++i) h = (i % 2) ? mul(h, w) : add(h, w);
  h.backward();
}

void BM_tape_overhead_fwd(benchmark::State& state) {
  Var x = Var::parameter(Tensor::scalar(0.5f)), w = Var::parameter(Tensor::scalar(0.999f));
  for (auto _ : state) {
    Var h = x;
    for (int i = 0; i < kOps; ++i) h = (i % 2) ? mul(h, w) : add(h, w);
    benchmark::DoNotOptimize(h.value().data());
    tape().clear();
  }
  set_ns_per_op(state, kOps);
}

void BM_tape_overhead_fwd_bwd(benchmark::State& state) {
  Var x = Var::parameter(Tensor::scalar(0.5f)), w = Var::parameter(Tensor::scalar(0.999f));
  for (auto _ : state) {
    x.zero_grad();
    w.zero_grad();
    tape_chain_step(x, w);
    benchmark::DoNotOptimize(w.grad().data());
  }
  set_ns_per_op(state, kOps);
}

// The same chain under NoGrad: what an op costs when nothing is recorded.
void BM_tape_overhead_nograd(benchmark::State& state) {
  Var x = Var::parameter(Tensor::scalar(0.5f)), w = Var::parameter(Tensor::scalar(0.999f));
  NoGrad off;
  for (auto _ : state) {
    Var h = x;
    for (int i = 0; i < kOps; ++i) h = (i % 2) ? mul(h, w) : add(h, w);
    benchmark::DoNotOptimize(h.value().data());
  }
  set_ns_per_op(state, kOps);
}

// ---- mixed BLAS + OpenMP: one attention head, forward + backward -----------------------------
// s = q k^T / sqrt(d), p = softmax(s), o = p v: GEMMs and an OpenMP softmax alternate, which is
// where two thread pools (OpenBLAS pthreads and OpenMP) fight over the cores.
void BM_attention_head_fwd_bwd(benchmark::State& state) {
  const int64_t t = state.range(0), d = 64;
  Var q = Var::parameter(random_tensor({t, d}, 1)), k = Var::parameter(random_tensor({t, d}, 2));
  Var v = Var::parameter(random_tensor({t, d}, 3));
  const Tensor g = random_tensor({t, d}, 4);
  for (auto _ : state) {
    for (Var* p : {&q, &k, &v}) p->zero_grad();
    Var o = matmul(softmax(mul_scalar(matmul(q, k, false, true), 0.125f)), v);
    o.backward(g);
    benchmark::DoNotOptimize(q.grad().data());
  }
  set_flops(state, 3 * 2 * 2.0 * t * t * d);  // two (t,t,d) GEMMs, three times (fwd + 2 bwd)
}

// ---- fused multi-head attention at the workloads' shapes ----------------------------------------
// (batch, T, heads, head_dim): W4 is (32, 128, 4, 32) causal; q, k and v are column blocks of one
// (B, T, 3 C) projection as in the models. FLOPs count the visible triangle only (the kernels skip
// the hidden one): forward Q K^T and P V, backward dP, dQ, dK, dV, each 2 (T(T+1)/2) d per head.
void BM_fused_attention(benchmark::State& state, bool backward) {
  const int64_t b = state.range(0), t = state.range(1), h = state.range(2), d = state.range(3);
  const int64_t c = h * d;
  Var qkv = Var::parameter(random_tensor({b, t, 3 * c}, 1));
  const Tensor g = random_tensor({b, t, c}, 2);
  const FusedAttentionSpec spec{.heads = h,
                                .kv_heads = h,
                                .head_dim = d,
                                .v_head_dim = d,
                                .q_col = 0,
                                .k_col = c,
                                .v_col = 2 * c,
                                .scale = 1 / std::sqrt(static_cast<real>(d)),
                                .causal = true};
  for (auto _ : state) {
    qkv.zero_grad();
    Var out = fused_attention(qkv, qkv, qkv, spec).out;
    if (backward) out.backward(g);
    benchmark::DoNotOptimize(out.value().data());
    tape().clear();
  }
  const double per_product = 2.0 * (t * (t + 1) / 2) * d * b * h;
  set_flops(state, per_product * (backward ? 6 : 2));
}
void BM_fused_attention_fwd(benchmark::State& state) {
  BM_fused_attention(state, false);
}
void BM_fused_attention_fwd_bwd(benchmark::State& state) {
  BM_fused_attention(state, true);
}

// ---- dropout's random words -------------------------------------------------------------------
// Philox-4x32-10 words into a buffer (kernels/philox.h), the draw under every dropout mask; run
// with ATTN_ISA=avx2 and avx512 to compare the batch kernels. Reports ns per word.
void BM_philox_words(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<uint32_t> words(static_cast<size_t>(n));
  uint64_t seed = 1;
  for (auto _ : state) {
    kernels::philox_words(seed++, 0, n, words.data());
    benchmark::DoNotOptimize(words.data());
  }
  set_ns_per_op(state, static_cast<int>(n));
}

// Registers every benchmark. With one thread the time is this thread's CPU time (on a shared
// machine wall time also counts waiting for a core); with more, wall time (CPU time would
// count only the main thread's share of the work).
void register_all() {
  const bool wall = num_threads() > 1;
  auto reg = [&](const char* name, void (*fn)(benchmark::State&)) {
    auto* b = benchmark::RegisterBenchmark(name, fn)->Unit(benchmark::kMicrosecond);
    if (wall) b->UseRealTime();
    return b;
  };
  using Fn = void (*)(benchmark::State&);
  const std::pair<const char*, Fn> matmuls[] = {{"sgemm_raw", BM_sgemm_raw},
                                                {"matmul_tape_fwd", BM_matmul_tape_fwd},
                                                {"sgemm_raw_x3", BM_sgemm_raw_x3},
                                                {"matmul_tape_fwd_bwd", BM_matmul_tape_fwd_bwd}};
  for (const auto& [name, fn] : matmuls) reg(name, fn)->Arg(128)->Arg(256)->Arg(512)->Arg(1024);
  // (rows, C): 8 heads x 32x32 scores for a batch of 64; 8 heads x T=128; a (B*T, d_ff)
  // activation; a few long rows.
  const std::pair<const char*, Fn> rows[] = {{"softmax_fwd", BM_softmax_fwd},
                                             {"softmax_fwd_bwd", BM_softmax_fwd_bwd},
                                             {"layer_norm_fwd", BM_layer_norm_fwd},
                                             {"layer_norm_fwd_bwd", BM_layer_norm_fwd_bwd}};
  for (const auto& [name, fn] : rows)
    reg(name, fn)
        ->Args({64 * 8 * 32, 32})
        ->Args({8 * 128, 128})
        ->Args({4096, 512})
        ->Args({256, 4096});
  // Tape overhead is single-threaded work: always CPU time.
  benchmark::RegisterBenchmark("tape_overhead_fwd", BM_tape_overhead_fwd)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("tape_overhead_fwd_bwd", BM_tape_overhead_fwd_bwd)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("tape_overhead_nograd", BM_tape_overhead_nograd)
      ->Unit(benchmark::kMicrosecond);
  reg("attention_head_fwd_bwd", BM_attention_head_fwd_bwd)->Arg(128)->Arg(512);
  for (auto [name, fn] : {std::pair<const char*, Fn>{"fused_attention_fwd", BM_fused_attention_fwd},
                          {"fused_attention_fwd_bwd", BM_fused_attention_fwd_bwd}})
    reg(name, fn)->Args({32, 128, 4, 32})->Args({64, 33, 8, 16});  // W4; W1's decoder
  benchmark::RegisterBenchmark("philox_words", BM_philox_words)->Arg(1 << 20);
  benchmark::RegisterBenchmark("softmax_rows_std_exp", BM_softmax_rows_std_exp)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("softmax_rows_vexp", BM_softmax_rows_vexp)
      ->Unit(benchmark::kMicrosecond);
}

// `--count-tape N`: N chain steps and nothing else. Instructions per op =
// (Ir(N2) - Ir(N1)) / ((N2 - N1) * 100) from `valgrind --tool=callgrind`.
int count_tape(int steps) {
  Var x = Var::parameter(Tensor::scalar(0.5f)), w = Var::parameter(Tensor::scalar(0.999f));
  for (int s = 0; s < steps; ++s) {
    x.zero_grad();
    w.zero_grad();
    tape_chain_step(x, w);
  }
  return w.grad().item() > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  attn::init_threads_from_env();
  if (argc == 3 && std::string(argv[1]) == "--count-tape") return count_tape(std::stoi(argv[2]));
  benchmark::AddCustomContext("attn_threads", std::to_string(attn::num_threads()));
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
