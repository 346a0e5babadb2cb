#include "nn/attention/dilated_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn::nn {

namespace {

void check_pattern(const char* who, int64_t keys, const std::vector<int64_t>& dilations) {
  if (keys < 1) throw Error(fmt::format("{}: keys must be >= 1, got {}", who, keys));
  for (int64_t r : dilations)
    if (r < 1) throw Error(fmt::format("{}: every dilation must be >= 1, got {}", who, r));
}

}  // namespace

Tensor dilated_mask(int64_t t, int64_t keys, const std::vector<int64_t>& dilations) {
  check_pattern("dilated_mask", keys, dilations);
  const auto heads = static_cast<int64_t>(dilations.size());
  Tensor m = Tensor::ones({1, heads, t, t});
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t r = dilations[static_cast<size_t>(h)];
    for (int64_t i = 0; i < t; ++i)
      for (int64_t step = 0; step < keys && i - step * r >= 0; ++step)
        m[(h * t + i) * t + (i - step * r)] = 0;
  }
  return m;
}

DilatedAttention::DilatedAttention(int64_t d_model,
                                   int64_t nhead,
                                   int64_t keys,
                                   std::vector<int64_t> dilations,
                                   Generator& gen,
                                   bool bias)
    : ProjectedAttention("DilatedAttention", d_model, nhead, gen, bias),
      keys_(keys),
      dilations_(std::move(dilations)) {
  check_pattern("DilatedAttention", keys_, dilations_);
  if (static_cast<int64_t>(dilations_.size()) != nhead)
    throw Error(fmt::format("DilatedAttention: one dilation per head: {} heads, {} dilations",
                            nhead, dilations_.size()));
}

AttentionOutput DilatedAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);
  SdpaOptions opt;
  opt.masks.attn_mask = dilated_mask(x.size(1), keys_, dilations_);
  AttentionOutput r = scaled_dot_product_attention(a.q, a.k, a.v, opt);
  r.out = combine(r.out);
  return r;
}

}  // namespace attn::nn
