#include "nn/attention/sliding_window.h"

#include <fmt/format.h>

#include <cstdlib>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"

namespace attn::nn {

Tensor sliding_window_mask(int64_t t,
                           int64_t window,
                           bool causal,
                           const std::vector<int64_t>& global_tokens,
                           const RandomLinks& links) {
  if (t <= 0 || window < 0)
    throw Error(fmt::format("sliding_window_mask: need t > 0 and window >= 0, got t={} window={}",
                            t, window));
  std::vector<char> global(static_cast<size_t>(t), 0);
  for (int64_t g : global_tokens) {
    if (g < 0 || g >= t)
      throw Error(fmt::format("sliding_window_mask: global token {} outside [0, {})", g, t));
    global[static_cast<size_t>(g)] = 1;
  }
  Tensor mask({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j) {
      const int64_t dist = i - j;
      const bool in_window = causal ? (dist >= 0 && dist <= window) : std::abs(dist) <= window;
      const bool via_global = (global[i] || global[j]) && (!causal || j <= i);
      mask[i * t + j] = (in_window || via_global) ? 0 : 1;
    }
  if (links.per_row > 0 && links.rows() != t)
    throw Error(
        fmt::format("sliding_window_mask: random links for {} rows, t={}", links.rows(), t));
  for (int64_t i = 0; i < links.rows(); ++i)
    for (int64_t n = 0; n < links.per_row; ++n)
      if (const int64_t j = links.key(i, n); j >= t || j < -1)
        throw Error(fmt::format("sliding_window_mask: random link {} outside [0, {})", j, t));
      else if (j >= 0)
        mask[i * t + j] = 0;
  return mask;
}

Tensor causal_window_mask(int64_t tq, int64_t tk, int64_t window) {
  if (tq <= 0 || tk < tq || window < 0)
    throw Error(fmt::format(
        "causal_window_mask: need 0 < tq <= tk and window >= 0, got tq={} tk={} window={}", tq, tk,
        window));
  Tensor mask({tq, tk});
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j) {
      const int64_t dist = tk - tq + i - j;  // how far key j lies behind the query
      mask[i * tk + j] = (dist >= 0 && dist <= window) ? 0 : 1;
    }
  return mask;
}

SlidingWindowAttention::SlidingWindowAttention(int64_t d_model,
                                               int64_t nhead,
                                               int64_t window,
                                               Generator& gen,
                                               bool causal,
                                               std::vector<int64_t> global_tokens,
                                               bool bias,
                                               int64_t random_links,
                                               uint64_t random_seed)
    : ProjectedAttention("SlidingWindowAttention", d_model, nhead, gen, bias),
      window_(window),
      causal_(causal),
      global_(std::move(global_tokens)),
      random_links_(random_links),
      random_seed_(random_seed) {
  if (window < 0)
    throw Error(fmt::format("SlidingWindowAttention: window must be >= 0, got {}", window));
  if (random_links < 0)
    throw Error(
        fmt::format("SlidingWindowAttention: random_links must be >= 0, got {}", random_links));
}

RandomLinks SlidingWindowAttention::links_for(int64_t t) const {
  if (random_links_ == 0) return {};
  return draw_random_links(t, window_, causal_, global_, random_links_, random_seed_);
}

AttentionOutput SlidingWindowAttention::forward(
    const Var& x, const std::optional<Tensor>& key_padding_mask) const {
  const HeadsQKV a = project(x);
  const RandomLinks links = links_for(x.size(1));
  if (!reference_mode() && !key_padding_mask) {
    // Fast path: the band, the global rows and columns and the links alone, O(T (window + g +
    // r)) (the same outputs and gradients as the masked path below,
    // tests/nn/banded_attention_test.cpp); no (T,T) weights exist to return.
    return {combine(banded_attention(a.q, a.k, a.v, window_, causal_, 0, global_, links)), Var()};
  }
  SdpaOptions opt;
  opt.masks.attn_mask = sliding_window_mask(x.size(1), window_, causal_, global_, links);
  opt.masks.key_padding_mask = key_padding_mask;
  AttentionOutput r = scaled_dot_product_attention(a.q, a.k, a.v, opt);
  r.out = combine(r.out);
  return r;
}

}  // namespace attn::nn
