// A linear-attention feature map as a plugin: Performer's positive random features (FAVOR+,
// Choromanski et al. 2021). With w_1..w_m drawn from N(0, I_d),
//   phi(x) = exp(W x' - |x'|^2 / 2) / sqrt(m),   x' = x / d^(1/4),
// and E_W[phi(q) . phi(k)] = exp(q . k / sqrt(d)): softmax's own kernel, estimated with m
// positive features, so linear attention with this map approaches softmax attention as m grows
// (every feature is > 0, so the readout's denominator never crosses 0).
//
//   attnlab list --plugin build/librandom_features.so          # the row, its features checked
//   attnlab run linear-vs-softmax-recall --plugin build/librandom_features.so
//
// W is drawn once per input width d from a fixed seed, so every run reads the same features.
// No parameters, so nothing to gradient-check: the loader checks that the features are finite,
// non-negative and one vector per query or key.
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>

#include <attnlab/autograd/functional.h>
#include <attnlab/autograd/generator.h>
#include <attnlab/nn/mixer/plugin.h>

namespace {

constexpr int64_t kFeatures = 64;  // m

// W (m, d) for this d, drawn on first use and kept.
attn::Var projection(int64_t d) {
  static std::mutex lock;
  static std::map<int64_t, attn::Var> by_width;
  std::lock_guard<std::mutex> hold(lock);
  auto it = by_width.find(d);
  if (it == by_width.end()) {
    attn::Generator gen(2021);
    it = by_width.emplace(d, attn::Var::constant(attn::Tensor::randn({kFeatures, d}, gen))).first;
  }
  return it->second;
}

// x (..., d) -> (..., m).
attn::Var positive_random_features(const attn::Var& x) {
  const int64_t d = x.shape().back();
  const int axis = static_cast<int>(x.shape().size()) - 1;
  const attn::Var scaled = attn::mul_scalar(x, static_cast<attn::real>(std::pow(d, -0.25)));
  const attn::Var half_norm = attn::mul_scalar(attn::sum(attn::mul(scaled, scaled), axis, true),
                                               static_cast<attn::real>(0.5));
  const attn::Var logits = attn::sub(attn::matmul(scaled, projection(d), false, true), half_norm);
  return attn::mul_scalar(attn::exp(logits),
                          static_cast<attn::real>(1.0 / std::sqrt(double(kFeatures))));
}

}  // namespace

ATTN_PLUGIN(coursework_random_features) {
  registry.add_feature_map(
      {.name = "random-features",
       .source = "coursework (Performer's FAVOR+, 64 positive random features)",
       .idea = "exp(W x' - |x'|^2/2)/sqrt(m): an unbiased estimate of softmax's kernel",
       .phi = positive_random_features});
}
