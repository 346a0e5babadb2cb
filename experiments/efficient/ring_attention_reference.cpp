#include "experiments/efficient/ring_attention_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "autograd/functional.h"
#include "experiments/common/attention_steps.h"

namespace attn::experiments {

namespace {

std::vector<double> as_doubles(const Tensor& t) {
  return std::vector<double>(t.data(), t.data() + t.numel());
}

// One head in double precision: s = scale q k^T, p = softmax(s), o = p v; then with
// D_i = dO_i . o_i:  dv = p^T dO,  dp = dO v^T,  ds = p (dp - D),  dq = scale ds k,
// dk = scale ds^T q. Pointers are to the head's first row; results are added into the outputs.
void head_in_double(const float* q,
                    const float* k,
                    const float* v,
                    const float* g,
                    int64_t t,
                    int64_t d,
                    int64_t dv,
                    double* o,
                    double* dq,
                    double* dk,
                    double* dvv) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> p(static_cast<size_t>(t));
  for (int64_t i = 0; i < t; ++i) {
    double top = -INFINITY;
    for (int64_t j = 0; j < t; ++j) {
      double s = 0;
      for (int64_t c = 0; c < d; ++c) s += static_cast<double>(q[i * d + c]) * k[j * d + c];
      p[j] = s * scale;
      top = std::max(top, p[j]);
    }
    double total = 0;
    for (int64_t j = 0; j < t; ++j) total += (p[j] = std::exp(p[j] - top));
    for (int64_t j = 0; j < t; ++j) p[j] /= total;
    for (int64_t j = 0; j < t; ++j)
      for (int64_t c = 0; c < dv; ++c) o[i * dv + c] += p[j] * v[j * dv + c];
    double row_dot = 0;
    for (int64_t c = 0; c < dv; ++c) row_dot += static_cast<double>(g[i * dv + c]) * o[i * dv + c];
    for (int64_t j = 0; j < t; ++j) {
      double dp = 0;
      for (int64_t c = 0; c < dv; ++c) {
        dvv[j * dv + c] += p[j] * g[i * dv + c];
        dp += static_cast<double>(g[i * dv + c]) * v[j * dv + c];
      }
      const double ds = p[j] * (dp - row_dot) * scale;
      for (int64_t c = 0; c < d; ++c) {
        dq[i * d + c] += ds * k[j * d + c];
        dk[j * d + c] += ds * q[i * d + c];
      }
    }
  }
}

}  // namespace

AttentionValues attention_in_double(const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    const Tensor& d_out) {
  const int64_t h = q.size(0), t = q.size(1), d = q.size(2), dv = v.size(2);
  AttentionValues r{std::vector<double>(static_cast<size_t>(h * t * dv)),
                    std::vector<double>(static_cast<size_t>(h * t * d)),
                    std::vector<double>(static_cast<size_t>(h * t * d)),
                    std::vector<double>(static_cast<size_t>(h * t * dv))};
  for (int64_t i = 0; i < h; ++i)
    head_in_double(q.data() + i * t * d, k.data() + i * t * d, v.data() + i * t * dv,
                   d_out.data() + i * t * dv, t, d, dv, r.o.data() + i * t * dv,
                   r.dq.data() + i * t * d, r.dk.data() + i * t * d, r.dv.data() + i * t * dv);
  return r;
}

AttentionValues attention_in_float(const Tensor& q,
                                   const Tensor& k,
                                   const Tensor& v,
                                   const Tensor& d_out) {
  const Var qv = Var::parameter(q.clone()), kv = Var::parameter(k.clone()),
            vv = Var::parameter(v.clone());
  const Var o = attention_steps(qv, kv, vv, 1.0 / std::sqrt(static_cast<double>(q.size(2)))).out;
  const Tensor o_value = o.value().clone();
  sum(mul(o, Var::constant(d_out))).backward();
  return {as_doubles(o_value), as_doubles(qv.grad()), as_doubles(kv.grad()), as_doubles(vv.grad())};
}

Tensor block_of_rank(const Tensor& x, int rank, int ranks) {
  const int64_t h = x.size(0), t = x.size(1), c = x.size(2), tb = t / ranks;
  Tensor out = Tensor::empty({h, tb, c});
  for (int64_t i = 0; i < h; ++i)
    std::copy(x.data() + (i * t + rank * tb) * c, x.data() + (i * t + (rank + 1) * tb) * c,
              out.data() + i * tb * c);
  return out;
}

Tensor gather_blocks(train::distributed::Communicator& comm,
                     const Tensor& block,
                     const char* what) {
  const int64_t h = block.size(0), tb = block.size(1), c = block.size(2), t = tb * comm.size();
  Tensor whole = Tensor::zeros({h, t, c});
  for (int64_t i = 0; i < h; ++i)
    std::copy(block.data() + i * tb * c, block.data() + (i + 1) * tb * c,
              whole.data() + (i * t + comm.rank() * tb) * c);
  comm.sum_in_rank_order(std::span<float>(whole.data(), static_cast<size_t>(whole.numel())),
                         fmt::format("gathering the ring's {}", what));
  return whole;
}

}  // namespace attn::experiments
