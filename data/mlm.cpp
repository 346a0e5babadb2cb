#include "data/mlm.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "data/tokenizer.h"

namespace attn::data {

namespace {
void require_probability(const char* field, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw Error(fmt::format("mlm_mask: {} must be in [0, 1], got {}", field, p));
}
}  // namespace

MlmBatch mlm_mask(const Tensor& tokens, int64_t vocab_size, Generator& gen, const MlmConfig& c) {
  require_probability("select_prob", c.select_prob);
  require_probability("mask_prob", c.mask_prob);
  require_probability("random_prob", c.random_prob);
  if (c.mask_prob + c.random_prob > 1.0)
    throw Error(fmt::format("mlm_mask: mask_prob + random_prob must be <= 1, got {} + {}",
                            c.mask_prob, c.random_prob));
  if (vocab_size <= kNumSpecial)
    throw Error(fmt::format("mlm_mask: vocab_size {} has no regular tokens", vocab_size));
  MlmBatch m;
  m.input = tokens.clone();
  m.labels = Tensor::full(tokens.shape(), static_cast<real>(kIgnoreIndex));
  for (int64_t i = 0; i < tokens.numel(); ++i) {
    const auto id = static_cast<int64_t>(tokens[i]);
    if (Vocab::is_special(id)) continue;
    if (gen.uniform() >= c.select_prob) continue;
    m.labels[i] = tokens[i];
    ++m.num_selected;
    const double u = gen.uniform();
    if (u < c.mask_prob)
      m.input[i] = kMask;
    else if (u < c.mask_prob + c.random_prob)
      m.input[i] = static_cast<real>(kNumSpecial + gen.randint(vocab_size - kNumSpecial));
  }
  return m;
}

}  // namespace attn::data
