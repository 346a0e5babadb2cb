#include "nn/attention/titans_memory.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

namespace {

// A (B,...) copy of a parameter without the batch axis: p + zeros(B,...), so the gradient sums
// over the batch.
Var batched(const Var& p, int64_t batch) {
  Shape shape = p.shape();
  shape.insert(shape.begin(), batch);
  return add(Var::constant(Tensor::zeros(shape)), p);
}

// (n, P+2n), 1 = hidden: segment row i sees every persistent token, memory tokens j <= i and
// segment rows j <= i (memory token j is read with row j's query, so it carries row j).
Tensor segment_mask(int64_t persistent, int64_t n) {
  const int64_t width = persistent + 2 * n;
  Tensor hide({n, width});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (j > i) hide[i * width + persistent + j] = hide[i * width + persistent + n + j] = 1;
  return hide;
}

}  // namespace

Var l2_normalize(const Var& x, real eps) {
  return div(x, sqrt(add_scalar(sum(mul(x, x), -1, true), eps)));
}

Var memory_gradient(const Var& m, const Var& k, const Var& v) {
  // l = (1/n) sum_i ||r_i||^2 with r = k m - v (B,n,e); dl/dr = (2/n) r; dl/dm = k^T dl/dr.
  const real n = static_cast<real>(k.size(1));
  return matmul(k, sub(matmul(k, m), v), /*trans_a=*/true, false, 2 / n);
}

NeuralMemory memory_write(const NeuralMemory& mem,
                          const Var& k,
                          const Var& v,
                          const Var& eta,
                          const Var& theta,
                          const Var& alpha) {
  const Var step = mul(theta, memory_gradient(mem.m, k, v));  // theta G
  NeuralMemory out;
  out.s = mem.s ? sub(mul(eta, *mem.s), step) : neg(step);
  out.m = add(mul(add_scalar(neg(alpha), 1), mem.m), *out.s);
  return out;
}

TitansMemoryAttention::TitansMemoryAttention(const TitansOptions& o, Generator& gen)
    : ProjectedAttention("TitansMemoryAttention", o.d_model, o.nhead, gen, o.bias), o_(o) {
  if (o.segment < 1 || o.persistent < 0)
    throw Error(fmt::format(
        "TitansMemoryAttention: segment must be >= 1 and persistent >= 0, got {} and {}", o.segment,
        o.persistent));
  const int64_t d = o.d_model;
  mem_q = register_module("mem_q", std::make_shared<Linear>(d, d, false, gen));
  mem_k = register_module("mem_k", std::make_shared<Linear>(d, d, false, gen));
  mem_v = register_module("mem_v", std::make_shared<Linear>(d, d, false, gen));
  memory_init = register_parameter("memory_init", Tensor::zeros({d, d}));
  if (o.persistent > 0)
    persistent_tokens =
        register_parameter("persistent_tokens", Tensor::randn({o.persistent, d}, gen, 0.5));
  // sigmoid(0) = 0.5 for the momentum and the step; sigmoid(-3) ~ 0.05 forgets a little.
  eta_logit = register_parameter("eta_logit", Tensor::zeros({1}));
  theta_logit = register_parameter("theta_logit", Tensor::zeros({1}));
  alpha_logit = register_parameter("alpha_logit", Tensor::full({1}, -3));
}

Var TitansMemoryAttention::eta() const {
  return sigmoid(eta_logit);
}
Var TitansMemoryAttention::theta() const {
  return sigmoid(theta_logit);
}
Var TitansMemoryAttention::alpha() const {
  return sigmoid(alpha_logit);
}

Var TitansMemoryAttention::forward(const Var& x) const {
  if (x.rank() != 3 || x.size(2) != o_.d_model)
    throw Error(fmt::format("TitansMemoryAttention: expected x (B,T,{}), got {}", o_.d_model,
                            shape_str(x.shape())));
  const int64_t batch = x.size(0), t_len = x.size(1), np = o_.persistent;
  const Var eta_v = eta(), theta_v = theta(), alpha_v = alpha();
  const Var persist = np > 0 ? batched(persistent_tokens, batch) : Var();
  NeuralMemory mem{batched(memory_init, batch), std::nullopt};
  std::vector<Var> outs;
  for (int64_t start = 0; start < t_len; start += o_.segment) {
    const int64_t end = std::min(start + o_.segment, t_len), n = end - start;
    const Var xs = slice(x, 1, start, end);  // (B,n,d)
    // Read: one memory token per row, from the memory as the earlier segments left it.
    const Var h = matmul(l2_normalize(mem_q->forward(xs)), mem.m);
    std::vector<Var> parts;
    if (np > 0) parts.push_back(persist);
    parts.push_back(h);
    parts.push_back(xs);
    const HeadsQKV a = project(concat(parts, 1));  // (B,H,P+2n,Dh)
    SdpaOptions opt;
    opt.masks.attn_mask = segment_mask(np, n);
    const Var q = slice(a.q, 2, np + n, np + 2 * n);  // queries of the segment rows only
    outs.push_back(combine(scaled_dot_product_attention(q, a.k, a.v, opt).out));
    // Write: one gradient step on the segment's keys and values (not needed after the last).
    if (end < t_len)
      mem = memory_write(mem, l2_normalize(mem_k->forward(xs)), mem_v->forward(xs), eta_v, theta_v,
                         alpha_v);
  }
  return outs.size() == 1 ? outs.front() : concat(outs, 1);
}

}  // namespace attn::nn
