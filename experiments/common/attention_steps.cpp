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

}  // namespace attn::experiments
