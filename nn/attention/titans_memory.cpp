#include "nn/attention/titans_memory.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
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

NeuralMemory memory_step(
    const NeuralMemory& mem, const Var& grad, const Var& eta, const Var& theta, const Var& alpha) {
  const Var step = mul(theta, grad);  // theta G
  NeuralMemory out;
  out.s = mem.s ? sub(mul(eta, *mem.s), step) : neg(step);
  out.m = add(mul(add_scalar(neg(alpha), 1), mem.m), *out.s);
  return out;
}

NeuralMemory memory_write(const NeuralMemory& mem,
                          const Var& k,
                          const Var& v,
                          const Var& eta,
                          const Var& theta,
                          const Var& alpha) {
  return memory_step(mem, memory_gradient(mem.m, k, v), eta, theta, alpha);
}

namespace {

// phi(h) = c silu(h) and phi'(h) = c sigmoid(h) (1 + h (1 - sigmoid(h))), c = 1/sqrt(hidden).
real mlp_scale(const Var& w1) {
  return static_cast<real>(1 / std::sqrt(static_cast<double>(w1.shape().back())));
}

}  // namespace

Var mlp_memory_read(const Var& w1, const Var& w2, const Var& u) {
  return matmul(mul_scalar(silu(matmul(u, w1)), mlp_scale(w1)), w2);
}

std::pair<Var, Var> mlp_memory_gradients(const Var& w1, const Var& w2, const Var& k, const Var& v) {
  const real n = static_cast<real>(k.size(1)), c = mlp_scale(w1);
  const Var h = matmul(k, w1);           // (B,n,hidden)
  const Var a = mul_scalar(silu(h), c);  // phi(h)
  const Var r = sub(matmul(a, w2), v);   // (B,n,e)
  const Var d_w2 = matmul(a, r, true, false, 2 / n);
  const Var g = sigmoid(h);
  const Var d_phi = mul_scalar(mul(g, add_scalar(mul(h, add_scalar(neg(g), 1)), 1)), c);
  const Var d_h = mul(matmul(r, w2, false, true, 2 / n), d_phi);  // dl/dh
  return {matmul(k, d_h, true, false), d_w2};
}

LongTermMemory::LongTermMemory(Module& owner, const MemoryOptions& o, Generator& gen) : mo_(o) {
  if (o.depth != 1 && o.depth != 2)
    throw Error(fmt::format("Titans memory: depth must be 1 (linear) or 2 (MLP), got {}", o.depth));
  if (o.hidden < 0)
    throw Error(fmt::format("Titans memory: hidden must be >= 0, got {}", o.hidden));
  if (o.hidden == 0) mo_.hidden = o.d_model;
  const int64_t d = o.d_model;
  mem_q = owner.register_module("mem_q", std::make_shared<Linear>(d, d, false, gen));
  mem_k = owner.register_module("mem_k", std::make_shared<Linear>(d, d, false, gen));
  mem_v = owner.register_module("mem_v", std::make_shared<Linear>(d, d, false, gen));
  if (o.depth == 1) {
    memory_init = owner.register_parameter("memory_init", Tensor::zeros({d, d}));
  } else {
    // W1 random (a zero W1 gets no gradient through phi'), W2 zero: the memory starts empty.
    memory_init = owner.register_parameter("memory_init", Tensor::randn({d, mo_.hidden}, gen));
    memory_init_out = owner.register_parameter("memory_init_out", Tensor::zeros({mo_.hidden, d}));
  }
  // sigmoid(0) = 0.5 for the momentum and the step; sigmoid(-3) ~ 0.05 forgets a little.
  eta_logit = owner.register_parameter("eta_logit", Tensor::zeros({1}));
  theta_logit = owner.register_parameter("theta_logit", Tensor::zeros({1}));
  alpha_logit = owner.register_parameter("alpha_logit", Tensor::full({1}, -3));
}

Var LongTermMemory::eta() const {
  return sigmoid(eta_logit);
}
Var LongTermMemory::theta() const {
  return sigmoid(theta_logit);
}
Var LongTermMemory::alpha() const {
  return sigmoid(alpha_logit);
}

MemoryWeights LongTermMemory::start(int64_t batch) const {
  MemoryWeights w{{batched(memory_init, batch), std::nullopt}};
  if (mo_.depth == 2) w.push_back({batched(memory_init_out, batch), std::nullopt});
  return w;
}

Var LongTermMemory::read(const MemoryWeights& w, const Var& xs) const {
  const Var q = l2_normalize(mem_q->forward(xs));
  return w.size() == 1 ? matmul(q, w[0].m) : mlp_memory_read(w[0].m, w[1].m, q);
}

MemoryWeights LongTermMemory::write(const MemoryWeights& w, const Var& xs, int64_t segment) const {
  const Var k = l2_normalize(mem_k->forward(xs)), v = mem_v->forward(xs);
  const Var eta_v = eta(), theta_v = theta(), alpha_v = alpha();
  MemoryWeights out;
  if (w.size() == 1) {
    out.push_back(memory_write(w[0], k, v, eta_v, theta_v, alpha_v));
  } else {
    const auto [g1, g2] = mlp_memory_gradients(w[0].m, w[1].m, k, v);
    out.push_back(memory_step(w[0], g1, eta_v, theta_v, alpha_v));
    out.push_back(memory_step(w[1], g2, eta_v, theta_v, alpha_v));
  }
  if (trace_) record(w, out, k, v, segment);
  return out;
}

void LongTermMemory::record(const MemoryWeights& before,
                            const MemoryWeights& after,
                            const Var& k,
                            const Var& v,
                            int64_t segment) const {
  NoGrad off;
  const int64_t batch = k.size(0);
  // Per-row associative loss (1/n) sum_i ||M(k_i) - v_i||^2 before the write.
  const Var pred =
      before.size() == 1 ? matmul(k, before[0].m) : mlp_memory_read(before[0].m, before[1].m, k);
  const Var r = sub(pred, v);
  const Tensor loss = mean(sum(mul(r, r), -1), -1).value();  // (B)
  MemoryWriteRecord rec{segment, {}, std::vector<double>(static_cast<size_t>(batch), 0.0)};
  for (int64_t b = 0; b < batch; ++b) rec.loss_before.push_back(loss[b]);
  for (size_t i = 0; i < before.size(); ++i) {
    const Tensor d = sub(after[i].m, before[i].m).value();
    const int64_t per = d.numel() / batch;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < per; ++j)
        rec.update_norm[static_cast<size_t>(b)] += double(d[b * per + j]) * d[b * per + j];
  }
  for (double& u : rec.update_norm) u = std::sqrt(u);
  trace_->push_back(std::move(rec));
}

Var LongTermMemory::read_segments(const Var& x, int64_t segment) const {
  const int64_t t_len = x.size(1);
  MemoryWeights w = start(x.size(0));
  std::vector<Var> reads;
  for (int64_t start_row = 0, c = 0; start_row < t_len; start_row += segment, ++c) {
    const int64_t end = std::min(start_row + segment, t_len);
    const Var xs = slice(x, 1, start_row, end);
    reads.push_back(read(w, xs));
    if (end < t_len) w = write(w, xs, c);
  }
  return reads.size() == 1 ? reads.front() : concat(reads, 1);
}

TitansMemoryAttention::TitansMemoryAttention(const TitansOptions& o, Generator& gen)
    : ProjectedAttention("TitansMemoryAttention", o.d_model, o.nhead, gen, o.bias),
      LongTermMemory(
          *this,
          MemoryOptions{.d_model = o.d_model, .depth = o.memory_depth, .hidden = o.memory_hidden},
          gen),
      o_(o) {
  if (o.segment < 1 || o.persistent < 0)
    throw Error(fmt::format(
        "TitansMemoryAttention: segment must be >= 1 and persistent >= 0, got {} and {}", o.segment,
        o.persistent));
  if (o.persistent > 0)
    persistent_tokens =
        register_parameter("persistent_tokens", Tensor::randn({o.persistent, o.d_model}, gen, 0.5));
}

Var TitansMemoryAttention::forward(const Var& x) const {
  if (x.rank() != 3 || x.size(2) != o_.d_model)
    throw Error(fmt::format("TitansMemoryAttention: expected x (B,T,{}), got {}", o_.d_model,
                            shape_str(x.shape())));
  const int64_t batch = x.size(0), t_len = x.size(1), np = o_.persistent;
  const Var persist = np > 0 ? batched(persistent_tokens, batch) : Var();
  MemoryWeights mem = start(batch);
  std::vector<Var> outs;
  for (int64_t first = 0, c = 0; first < t_len; first += o_.segment, ++c) {
    const int64_t end = std::min(first + o_.segment, t_len), n = end - first;
    const Var xs = slice(x, 1, first, end);  // (B,n,d)
    // Read: one memory token per row, from the memory as the earlier segments left it.
    const Var h = read(mem, xs);
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
    if (end < t_len) mem = write(mem, xs, c);
  }
  return outs.size() == 1 ? outs.front() : concat(outs, 1);
}

}  // namespace attn::nn
