#include "nn/attention/refined_attention.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

namespace {

Tensor causal_hidden(int64_t t) {  // (T,T), 1 above the diagonal (hidden)
  Tensor m = Tensor::zeros({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = i + 1; j < t; ++j) m[i * t + j] = 1;
  return m;
}

// softmax over the keys a causal query may read, as elementary ops (masked_fill, softmax) so
// that the reference tape holds no fused op: a hidden score becomes the lowest float, weight 0.
Var causal_softmax(const Var& scores, const Tensor& hidden) {
  return softmax(masked_fill(scores, hidden, std::numeric_limits<real>::lowest()));
}

Tensor scaled_randn(const Shape& shape, double scale, Generator& gen) {
  Tensor w = Tensor::randn(shape, gen);
  for (int64_t i = 0; i < w.numel(); ++i) w[i] = static_cast<real>(scale * w[i]);
  return w;
}

}  // namespace

RefinedAttention::RefinedAttention(int64_t d_model,
                                   int64_t nhead,
                                   int64_t max_len,
                                   int64_t width,
                                   Refinement kind,
                                   Generator& gen,
                                   bool bias)
    : ProjectedAttention("RefinedAttention", d_model, nhead, gen, bias),
      max_len_(max_len),
      width_(width),
      kind_(kind) {
  if (max_len < 1 || width < 1)
    throw Error(
        fmt::format("RefinedAttention: max_len ({}) and width ({}) must be >= 1", max_len, width));
  // A row of A sums to 1, so A W has entries of W's size: start them at order one.
  refine_q = register_parameter("refine_q", scaled_randn({nhead, max_len, width}, 1.0, gen));
  refine_k = register_parameter("refine_k", scaled_randn({nhead, max_len, width}, 1.0, gen));
}

RefinedWeights RefinedAttention::weights_of(const HeadsQKV& a) const {
  const int64_t t = a.q.size(2);
  if (t > max_len_)
    throw Error(fmt::format("RefinedAttention: input length {} exceeds max_len {}", t, max_len_));
  const Tensor hidden = causal_hidden(t);
  const real scale = 1 / std::sqrt(static_cast<real>(a.q.size(3)));
  const Var first = causal_softmax(mul_scalar(matmul(a.q, a.k, false, true), scale), hidden);
  // Each row of A as a query and as a key: (B,H,T,T) rows times (H,T,r) per head, as
  // (H, B T, T) @ (H, T, r) (matmul batches over equal leading axes).
  const int64_t b = a.q.size(0), h = a.q.size(1);
  const Var rows = reshape(permute(first, {1, 0, 2, 3}), {h, b * t, t});
  const auto per_head = [&](const Var& w) {
    return permute(reshape(matmul(rows, slice(w, 1, 0, t)), {h, b, t, width_}), {1, 0, 2, 3});
  };
  const Var rq = per_head(refine_q), rk = per_head(refine_k);
  const real refine_scale = 1 / std::sqrt(static_cast<real>(width_));
  const Var refined = causal_softmax(mul_scalar(matmul(rq, rk, false, true), refine_scale), hidden);
  const Var used = kind_ == Refinement::kSimple ? refined : mul_scalar(add(first, refined), 0.5);
  return {first, refined, used};
}

RefinedWeights RefinedAttention::weights(const Var& x) const {
  return weights_of(project(x));
}

Var RefinedAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);
  return combine(matmul(weights_of(a).used, a.v));
}

}  // namespace attn::nn
