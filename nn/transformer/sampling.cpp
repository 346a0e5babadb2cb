#include "nn/transformer/sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/error.h"

namespace attn::nn {

int64_t argmax(const real* values, int64_t n) {
  return std::max_element(values, values + n) - values;
}

int64_t pick_token(const real* logits,
                   int64_t vocab,
                   const SamplingOptions& options,
                   Generator& gen) {
  if (options.temperature < 0 || options.top_k < 0)
    throw Error(fmt::format("sampling: temperature ({}) and top_k ({}) must not be negative",
                            options.temperature, options.top_k));
  if (options.temperature == 0) return argmax(logits, vocab);
  // The k-th largest logit is the cut-off; everything below it gets probability 0.
  double cutoff = -INFINITY;
  if (options.top_k > 0 && options.top_k < vocab) {
    std::vector<real> sorted(logits, logits + vocab);
    std::nth_element(sorted.begin(), sorted.begin() + (options.top_k - 1), sorted.end(),
                     std::greater<real>());
    cutoff = sorted[options.top_k - 1];
  }
  const double top = *std::max_element(logits, logits + vocab);
  std::vector<double> p(vocab, 0.0);
  double total = 0;
  for (int64_t i = 0; i < vocab; ++i)
    if (logits[i] >= cutoff) total += p[i] = std::exp((logits[i] - top) / options.temperature);
  double u = gen.uniform() * total;
  for (int64_t i = 0; i < vocab; ++i) {
    if (p[i] == 0) continue;
    if (u < p[i]) return i;
    u -= p[i];
  }
  // Rounding left u just above the last bucket: the last kept token.
  for (int64_t i = vocab - 1; i >= 0; --i)
    if (p[i] > 0) return i;
  return argmax(logits, vocab);
}

}  // namespace attn::nn
