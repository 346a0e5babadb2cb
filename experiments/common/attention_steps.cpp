#include "experiments/common/attention_steps.h"

namespace attn::experiments {

AttentionSteps attention_steps(
    const Var& q, const Var& k, const Var& v, double scale, const Tensor* blocked) {
  AttentionSteps s;
  s.scores = mul_scalar(matmul(q, k, false, true), static_cast<real>(scale));
  Var masked = blocked ? masked_fill(s.scores, *blocked, static_cast<real>(-1e9)) : s.scores;
  s.weights = softmax(masked);
  s.out = matmul(s.weights, v);
  return s;
}

Tensor causal_blocked(int64_t t) {
  Tensor m({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = i + 1; j < t; ++j) m[i * t + j] = 1;
  return m;
}

}  // namespace attn::experiments
