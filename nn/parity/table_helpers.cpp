#include "nn/parity/table_helpers.h"

namespace attn::nn {

Tensor random_ids(const Shape& shape, int64_t n, Generator& gen) {
  Tensor ids(shape);
  for (int64_t i = 0; i < ids.numel(); ++i) ids[i] = static_cast<real>(gen.randint(n));
  return ids;
}

Tensor padding_mask(const std::vector<int64_t>& lengths, int64_t t) {
  const int64_t b = static_cast<int64_t>(lengths.size());
  Tensor m({b, t});
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = lengths[i]; j < t; ++j) m[i * t + j] = 1;
  return m;
}

Tensor causal_mask(int64_t t) {
  Tensor m({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = i + 1; j < t; ++j) m[i * t + j] = 1;
  return m;
}

}  // namespace attn::nn
