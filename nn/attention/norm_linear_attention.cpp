#include "nn/attention/norm_linear_attention.h"

#include "autograd/functional.h"
#include "nn/attention/linear_attention.h"

namespace attn::nn {

namespace {

constexpr real kEps = 1e-6;

// (1,1,T,1): t + 1 + eps at row t, the denominator causal_linear_attention gives unit features
// (t + 1 keys read, each 1 . 1).
Tensor key_counts(int64_t t) {
  Tensor c({1, 1, t, 1});
  for (int64_t i = 0; i < t; ++i) c[i] = static_cast<real>(i + 1) + kEps;
  return c;
}

}  // namespace

Var causal_kernel_sums(const Var& fq, const Var& fk, const Var& v) {
  const int64_t b = fq.size(0), h = fq.size(1), t = fq.size(2);
  const Var unit = Var::constant(Tensor::ones({b, h, t, 1}));
  // z_t = sum_{s<=t} fk_s: the prefix mean of fk times its denominator.
  const Var z = mul(causal_linear_attention(unit, unit, fk, kEps), Var::constant(key_counts(t)));
  const Var den = sum(mul(fq, z), -1, true);  // (B,H,T,1)
  return mul(causal_linear_attention(fq, fk, v, kEps), add_scalar(den, kEps));
}

NormLinearAttention::NormLinearAttention(int64_t d_model, int64_t nhead, Generator& gen, bool bias)
    : ProjectedAttention("NormLinearAttention", d_model, nhead, gen, bias) {
  norm_weight = register_parameter("norm_weight", Tensor::ones({head_dim()}));
}

Var NormLinearAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);
  const Var num = causal_kernel_sums(elu_feature_map(a.q), elu_feature_map(a.k), a.v);
  return combine(rms_norm(num, norm_weight));
}

}  // namespace attn::nn
