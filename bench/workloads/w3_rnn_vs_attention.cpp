// W3: the document's RNN-versus-self-attention timing table. Batch 1, d = 64, T = 16..1024:
// an RNN layer (hidden 64, tanh) walking T steps in series, against single-head attention
// softmax(q k^T / sqrt(d)) v over the whole sequence at once (no projections, as the document's
// scaled_dot_product_attention(Q, K, V)). Forward, and forward+backward from sum(output).
#include <cmath>
#include <memory>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "nn/rnn/recurrent.h"

namespace attn::bench {

namespace {

constexpr int64_t kDim = 64;
constexpr int64_t kLengths[] = {16, 64, 256, 1024};

struct RnnState {
  Generator gen{0};
  nn::RNN rnn{{.input_size = kDim, .hidden_size = kDim, .batch_first = true}, gen};
  Var x;
};

struct AttentionState {
  Var q, k, v;
};

// q (1,T,d), k (1,T,d), v (1,T,d) -> (1,T,d)
Var attention(const Var& q, const Var& k, const Var& v) {
  const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(kDim)));
  return matmul(softmax(matmul(q, k, false, true, scale)), v);  // the scale is the GEMM alpha
}

BenchCase rnn_case(int64_t t, bool backward) {
  auto s = std::make_shared<std::unique_ptr<RnnState>>();
  BenchCase c;
  c.workload = "W3";
  c.name = std::string("rnn ") + (backward ? "fwd+bwd" : "fwd") + " T=" + std::to_string(t);
  // input projection and recurrence: two (T,d)x(d,d) products per layer
  c.flops = 2 * 2.0 * t * kDim * kDim * (backward ? 3 : 1);
  c.tokens = static_cast<double>(t);
  c.setup = [s, t, backward] {
    *s = std::make_unique<RnnState>();
    Generator gen(1);
    (*s)->x = Var(Tensor::randn({1, t, kDim}, gen), backward);
  };
  c.step = [s, backward] {
    RnnState& st = **s;
    Var y = st.rnn.forward(st.x).y;
    if (backward) {
      st.rnn.zero_grad();
      st.x.zero_grad();
      sum(y).backward();
    } else {
      tape().clear();  // the parameters require gradients, so the forward was recorded
    }
  };
  c.teardown = [s] { s->reset(); };
  return c;
}

BenchCase attention_case(int64_t t, bool backward) {
  auto s = std::make_shared<AttentionState>();
  BenchCase c;
  c.workload = "W3";
  c.name = std::string("attention ") + (backward ? "fwd+bwd" : "fwd") + " T=" + std::to_string(t);
  c.flops = 2 * 2.0 * t * t * kDim * (backward ? 3 : 1);  // q k^T and p v
  c.tokens = static_cast<double>(t);
  c.setup = [s, t, backward] {
    Generator gen(2);
    // As in the document, the forward-only case has plain inputs (nothing to record).
    s->q = Var(Tensor::randn({1, t, kDim}, gen), backward);
    s->k = Var(Tensor::randn({1, t, kDim}, gen), backward);
    s->v = Var(Tensor::randn({1, t, kDim}, gen), backward);
  };
  c.step = [s, backward] {
    Var y = attention(s->q, s->k, s->v);
    if (!backward) return;
    for (Var* p : {&s->q, &s->k, &s->v}) p->zero_grad();
    sum(y).backward();
  };
  c.teardown = [s] { *s = AttentionState{}; };
  return c;
}

}  // namespace

std::vector<BenchCase> w3_cases() {
  std::vector<BenchCase> cases;
  for (bool backward : {false, true})
    for (int64_t t : kLengths) {
      cases.push_back(rnn_case(t, backward));
      cases.push_back(attention_case(t, backward));
    }
  return cases;
}

}  // namespace attn::bench
