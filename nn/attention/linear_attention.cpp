#include "nn/attention/linear_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

namespace {
void check_qkv(const Var& q, const Var& k, const Var& v, const char* who) {
  const bool ok = q.rank() == 4 && k.rank() == 4 && v.rank() == 4 && q.size(0) == k.size(0) &&
                  q.size(1) == k.size(1) && q.size(3) == k.size(3) && v.size(0) == k.size(0) &&
                  v.size(1) == k.size(1) && v.size(2) == k.size(2);
  if (!ok)
    throw Error(
        fmt::format("{}: expected q (B,H,T,D), k (B,H,S,D), v (B,H,S,M); got q {} k {} v {}", who,
                    shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
}
}  // namespace

Var elu_feature_map(const Var& x) {
  return add_scalar(elu(x), 1);
}

Var linear_attention(const Var& q, const Var& k, const Var& v, bool causal, real eps) {
  check_qkv(q, k, v, "linear_attention");
  const Var fq = elu_feature_map(q), fk = elu_feature_map(k);
  if (causal) {
    if (q.size(2) != k.size(2))
      throw Error(
          fmt::format("linear_attention: causal needs as many queries as keys, got {} and {}",
                      q.size(2), k.size(2)));
    return causal_linear_attention(fq, fk, v, eps);
  }
  const Var kv = matmul(fk, v, true, false);                    // (B,H,D,M) = phi(K)^T V
  const Var z = sum(fk, 2, /*keepdim=*/true);                   // (B,H,1,D) = sum_s phi(k_s)
  const Var num = matmul(fq, kv);                               // (B,H,T,M)
  const Var den = add_scalar(matmul(fq, z, false, true), eps);  // (B,H,T,1)
  return div(num, den);
}

Var linear_attention_step(
    const Var& q, const Var& k, const Var& v, FastWeightState& state, real eps) {
  check_qkv(q, k, v, "linear_attention_step");
  if (q.size(2) != 1 || k.size(2) != 1)
    throw Error(fmt::format("linear_attention_step: one position at a time, got q {} k {}",
                            shape_str(q.shape()), shape_str(k.shape())));
  const Var fq = elu_feature_map(q), fk = elu_feature_map(k);
  const Var outer = matmul(fk, v, true, false);  // (B,H,D,M) = phi(k_t) v_t^T
  state.s = state.steps == 0 ? outer : add(state.s, outer);
  state.z = state.steps == 0 ? fk : add(state.z, fk);  // (B,H,1,D)
  ++state.steps;
  const Var num = matmul(fq, state.s);                                // (B,H,1,M)
  const Var den = add_scalar(matmul(fq, state.z, false, true), eps);  // (B,H,1,1)
  return div(num, den);
}

Var linear_attention_recurrent(const Var& q, const Var& k, const Var& v, real eps) {
  check_qkv(q, k, v, "linear_attention_recurrent");
  const int64_t t_len = q.size(2);
  if (k.size(2) != t_len)
    throw Error(
        fmt::format("linear_attention_recurrent: needs as many queries as keys, got {} "
                    "and {}",
                    t_len, k.size(2)));
  FastWeightState state;
  std::vector<Var> ys;
  ys.reserve(static_cast<size_t>(t_len));
  for (int64_t t = 0; t < t_len; ++t)
    ys.push_back(linear_attention_step(slice(q, 2, t, t + 1), slice(k, 2, t, t + 1),
                                       slice(v, 2, t, t + 1), state, eps));
  return concat(ys, 2);
}

LinearAttention::LinearAttention(
    int64_t d_model, int64_t nhead, Generator& gen, bool causal, bool bias, double eps)
    : ProjectedAttention("LinearAttention", d_model, nhead, gen, bias),
      causal_(causal),
      eps_(static_cast<real>(eps)) {}

Var LinearAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);
  return combine(linear_attention(a.q, a.k, a.v, causal_, eps_));
}

Var LinearAttention::forward_recurrent(const Var& x) const {
  if (!causal_)
    throw Error("LinearAttention: the recurrent form is causal; build the layer with causal=true");
  const HeadsQKV a = project(x);
  return combine(linear_attention_recurrent(a.q, a.k, a.v, eps_));
}

}  // namespace attn::nn
