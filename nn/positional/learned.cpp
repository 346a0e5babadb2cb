#include "nn/positional/learned.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

LearnedPositionalEmbedding::LearnedPositionalEmbedding(int64_t max_len,
                                                       int64_t d_model,
                                                       Generator& gen,
                                                       double init_std)
    : Module("LearnedPositionalEmbedding"), max_len_(max_len), d_model_(d_model) {
  if (max_len <= 0 || d_model <= 0)
    throw Error(
        fmt::format("LearnedPositionalEmbedding: max_len and d_model must be positive, "
                    "got {} and {}",
                    max_len, d_model));
  weight = register_parameter("weight", Tensor::randn({max_len, d_model}, gen, init_std));
}

Var LearnedPositionalEmbedding::positions(int64_t start_pos, int64_t len) const {
  if (start_pos < 0 || len <= 0 || start_pos + len > max_len_)
    throw Error(fmt::format("LearnedPositionalEmbedding: positions [{}, {}) exceed max_len {}",
                            start_pos, start_pos + len, max_len_));
  return slice(weight, 0, start_pos, start_pos + len);
}

Var LearnedPositionalEmbedding::forward(const Var& x, int64_t start_pos) const {
  if ((x.rank() != 2 && x.rank() != 3) || x.shape().back() != d_model_)
    throw Error(fmt::format("LearnedPositionalEmbedding: expected x (B,T,{}) or (T,{}), got {}",
                            d_model_, d_model_, shape_str(x.shape())));
  return add(x, positions(start_pos, x.size(-2)));
}

}  // namespace attn::nn
