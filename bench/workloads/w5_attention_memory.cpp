// W5: the O(T^2) memory wall. Single-head attention (d 64) forward+backward at T = 1024..16384,
// naive (the T x T score and probability matrices are materialised, and saved for backward)
// against blockwise attention (online softmax over key blocks; nothing T x T is ever stored).
// peak_tensor_bytes in the result is the measure; time too. Naive stops at T = 8192 (at 16384 its
// matrices alone are several GiB); long cases run fewer timed steps to keep the run short.
#include <cmath>
#include <memory>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"

namespace attn::bench {

namespace {

constexpr int64_t kDim = 64;

struct QkvState {
  Var q, k, v;
  Tensor dy;
};

constexpr int64_t kBlock = 128;

BenchCase attention_case(int64_t t, bool blockwise) {
  auto s = std::make_shared<QkvState>();
  BenchCase c;
  c.workload = "W5";
  c.name = std::string(blockwise ? "blockwise" : "naive") + " fwd+bwd T=" + std::to_string(t);
  // Naive: 2 GEMMs forward, 4 backward. Blockwise recomputes the scores in backward: +1.
  c.flops = 2.0 * t * t * kDim * (blockwise ? 7 : 6);
  c.tokens = static_cast<double>(t);
  c.max_steps = t >= 4096 ? 3 : 0;
  c.setup = [s, t] {
    Generator gen(5);
    s->q = Var::parameter(Tensor::randn({1, t, kDim}, gen));
    s->k = Var::parameter(Tensor::randn({1, t, kDim}, gen));
    s->v = Var::parameter(Tensor::randn({1, t, kDim}, gen));
    s->dy = Tensor::randn({1, t, kDim}, gen);
  };
  c.step = [s, blockwise] {
    for (Var* p : {&s->q, &s->k, &s->v}) p->zero_grad();
    Var y;
    if (blockwise) {
      // Tiles of 128 (the library default is 64): (128,128)x(128,64) products run nearer the
      // GEMM peak; measured 0.91x the time of 64 at T = 4096 (docs/performance.md).
      y = blockwise_attention(s->q, s->k, s->v, false, kBlock);
    } else {
      const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(kDim)));
      y = matmul(softmax(matmul(s->q, s->k, false, true, scale)), s->v);  // scale: GEMM alpha
    }
    y.backward(s->dy);
  };
  c.teardown = [s] { *s = QkvState{}; };
  return c;
}

}  // namespace

std::vector<BenchCase> w5_cases() {
  std::vector<BenchCase> cases;
  for (int64_t t : {1024, 2048, 4096, 8192, 16384}) {
    if (t <= 8192) cases.push_back(attention_case(t, false));
    cases.push_back(attention_case(t, true));
  }
  return cases;
}

}  // namespace attn::bench
