#include "nn/attention/blockwise_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn::nn {

BlockwiseAttention::BlockwiseAttention(
    int64_t d_model, int64_t nhead, Generator& gen, bool causal, int64_t block_size, bool bias)
    : ProjectedAttention("BlockwiseAttention", d_model, nhead, gen, bias),
      causal_(causal),
      block_(block_size) {
  if (block_size <= 0)
    throw Error(fmt::format("BlockwiseAttention: block_size must be positive, got {}", block_size));
}

Var BlockwiseAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);
  return combine(blockwise_attention(a.q, a.k, a.v, causal_, block_));
}

}  // namespace attn::nn
