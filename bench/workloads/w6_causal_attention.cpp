// W6: causal against full softmax attention, the scaled_dot_product_attention layer forward and
// backward. W4's attention shape (4 heads of d 32) at T = 128..1024 with 4096 tokens per step
// (batch 4096 / T). A causal query sees (T + 1) / 2 keys on average, so a causal step should
// cost about half a full one, not more: the mask must save work, not add a pass. The same with
// multi-query attention (one key/value head shared by the 4 query heads: GQA's fused path).
#include <memory>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "nn/attention/sdpa.h"

namespace attn::bench {

namespace {

constexpr int64_t kHeads = 4, kDim = 32, kTokens = 4096;

struct QkvState {
  Var q, k, v;
  Tensor dy;
};

// kv_heads: kHeads (multi-head) or 1 (multi-query: every query head reads the one key head).
BenchCase attention_case(int64_t t, bool causal, int64_t kv_heads) {
  auto s = std::make_shared<QkvState>();
  const int64_t batch = kTokens / t;
  // Query-key pairs scored: all T^2, or the T (T + 1) / 2 a causal mask leaves.
  const double pairs = causal ? t * (t + 1) / 2.0 : double(t) * t;
  BenchCase c;
  c.workload = "W6";
  c.name = std::string(kv_heads == 1 ? "mqa " : "") + (causal ? "causal" : "full") +
           " fwd+bwd T=" + std::to_string(t);
  c.flops = 2.0 * batch * kHeads * pairs * kDim * 2 * 3;  // q k^T and p v, forward + backward
  c.tokens = static_cast<double>(kTokens);
  c.setup = [s, t, batch, kv_heads] {
    Generator gen(6);
    s->q = Var::parameter(Tensor::randn({batch, kHeads, t, kDim}, gen));
    s->k = Var::parameter(Tensor::randn({batch, kv_heads, t, kDim}, gen));
    s->v = Var::parameter(Tensor::randn({batch, kv_heads, t, kDim}, gen));
    s->dy = Tensor::randn({batch, kHeads, t, kDim}, gen);
  };
  c.step = [s, causal] {
    for (Var* p : {&s->q, &s->k, &s->v}) p->zero_grad();
    nn::SdpaOptions opt;
    opt.masks.causal = causal;
    nn::scaled_dot_product_attention(s->q, s->k, s->v, opt).out.backward(s->dy);
  };
  c.teardown = [s] { *s = QkvState{}; };
  return c;
}

}  // namespace

std::vector<BenchCase> w6_cases() {
  std::vector<BenchCase> cases;
  for (int64_t kv_heads : {kHeads, int64_t{1}})
    for (int64_t t : {128, 256, 512, 1024})
      for (bool causal : {false, true}) cases.push_back(attention_case(t, causal, kv_heads));
  return cases;
}

}  // namespace attn::bench
