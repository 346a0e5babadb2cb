#include "experiments/common/self_attention_stats.h"

#include "experiments/common/attention_steps.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

SelfAttentionStats self_attention_stats(const Tensor& x, double scale) {
  if (x.rank() != 2)
    throw Error("self_attention_stats: x must be (T,d), got rank " + std::to_string(x.rank()));
  NoGrad off;
  const Var xv = Var::constant(x);
  const AttentionSteps st = attention_steps(xv, xv, xv, scale);
  SelfAttentionStats s{st.scores.value(), st.weights.value()};
  const int64_t t = x.size(0);
  int64_t own_max = 0;
  for (int64_t i = 0; i < t; ++i) {
    s.mean_diagonal += s.weights[i * t + i];
    bool is_max = true;
    for (int64_t j = 0; j < t; ++j) {
      is_max = is_max && s.scores[i * t + i] >= s.scores[i * t + j];
      s.score_asymmetry =
          std::max(s.score_asymmetry, std::abs(double(s.scores[i * t + j]) - s.scores[j * t + i]));
      s.weight_asymmetry = std::max(s.weight_asymmetry,
                                    std::abs(double(s.weights[i * t + j]) - s.weights[j * t + i]));
    }
    own_max += is_max ? 1 : 0;
  }
  s.mean_diagonal /= static_cast<double>(t);
  s.diagonal_is_max = static_cast<double>(own_max) / static_cast<double>(t);
  return s;
}

Tensor one_hot_rows(int64_t rows, int64_t d) {
  if (rows > d)
    throw Error("one_hot_rows: " + std::to_string(rows) +
                " rows need d >= rows, got d = " + std::to_string(d));
  Tensor m({rows, d});
  for (int64_t i = 0; i < rows; ++i) m[i * d + i] = 1;
  return m;
}

}  // namespace attn::experiments
