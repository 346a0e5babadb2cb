#include "nn/attention/polarity_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

namespace {

constexpr real kLogFloor = 1e-6;  // x^p = exp(p log(x + floor)): finite at x = 0

Var power_map(const Var& x, const Var& p) {
  return exp(mul(p, log(add_scalar(x, kLogFloor))));
}

}  // namespace

Var causal_kernel_weights(const Var& fq, const Var& fk, real eps) {
  const int64_t t = fq.size(-2);
  Tensor above = Tensor::zeros({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = i + 1; j < t; ++j) above[i * t + j] = 1;
  const Var scores = masked_fill(matmul(fq, fk, false, true), above, 0);
  return div(scores, add_scalar(sum(scores, -1, true), eps));
}

PolarityAttention::PolarityAttention(int64_t d_model, int64_t nhead, Generator& gen, bool bias)
    : ProjectedAttention("PolarityAttention", d_model, nhead, gen, bias) {
  if (head_dim() % 2 != 0)
    throw Error(fmt::format(
        "PolarityAttention: the head width d_model / nhead = {} must be even (v splits into the "
        "same-sign and opposite-sign streams)",
        head_dim()));
  power_logit = register_parameter("power_logit", Tensor::zeros({1, nhead, 1, head_dim()}));
}

Var PolarityAttention::power() const {
  return add_scalar(mul_scalar(sigmoid(power_logit), 4), 1);
}

PolarityAttention::Features PolarityAttention::features(const HeadsQKV& a) const {
  const Var p = power();
  const Var q_pos = power_map(relu(a.q), p), q_neg = power_map(relu(neg(a.q)), p);
  const Var k_pos = power_map(relu(a.k), p), k_neg = power_map(relu(neg(a.k)), p);
  return {concat({q_pos, q_neg}, -1), concat({k_pos, k_neg}, -1), concat({k_neg, k_pos}, -1)};
}

Var PolarityAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);
  const Features f = features(a);
  const int64_t half = head_dim() / 2;
  const Var same = causal_linear_attention(f.q, f.k_same, slice(a.v, -1, 0, half));
  const Var opposite = causal_linear_attention(f.q, f.k_opposite, slice(a.v, -1, half, 2 * half));
  return combine(concat({same, opposite}, -1));
}

PolarityWeights PolarityAttention::weights(const Var& x) const {
  const Features f = features(project(x));
  return {causal_kernel_weights(f.q, f.k_same), causal_kernel_weights(f.q, f.k_opposite)};
}

}  // namespace attn::nn
