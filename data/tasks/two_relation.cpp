#include "data/tasks/two_relation.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "data/task.h"

namespace attn::data {

namespace {
constexpr const char* kName = "two-relation";
}

TwoRelationTask::TwoRelationTask(Config config) : config_(config) {
  require_at_least(kName, "seq_len", config_.seq_len, 2);
  require_at_least(kName, "content_dims", config_.content_dims, 1);
  require_at_least(kName, "position_dims", config_.position_dims, 1);
  require_between(kName, "target_position", config_.target_position, 0, config_.seq_len - 1);
  if (config_.position_code == PositionCode::kBinary &&
      (config_.position_dims >= 62 || (int64_t{1} << config_.position_dims) < config_.seq_len))
    throw Error(
        fmt::format("{}: position_dims = {} bits cannot give {} positions distinct "
                    "binary codes",
                    kName, config_.position_dims, config_.seq_len));
}

real TwoRelationTask::position_bit(int64_t pos, int64_t bit) const {
  if (config_.position_code == PositionCode::kDocument) return pos == bit ? 1 : 0;  // eye(T)
  // kBinary: most significant bit first, so with 2 dims 0,1,2,3 -> 00, 01, 10, 11.
  return static_cast<real>((pos >> (config_.position_dims - 1 - bit)) & 1);
}

TwoRelationBatch TwoRelationTask::sample(int64_t batch, Generator& gen) const {
  require_at_least(kName, "batch", batch, 1);
  const int64_t T = config_.seq_len, C = config_.content_dims, P = config_.position_dims;
  TwoRelationBatch b;
  b.x = Tensor::zeros({batch, T, C + P});
  b.target_position = Tensor::zeros({batch, T, T});
  b.target_content = Tensor::zeros({batch, T, T});
  for (int64_t n = 0; n < batch; ++n) {
    real* x = b.x.data() + n * T * (C + P);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) x[t * (C + P) + c] = static_cast<real>(gen.normal());
    const int64_t plant = gen.randint(T);
    for (int64_t c = 0; c < C; ++c) x[plant * (C + P) + c] = c == 0 ? 1 : 0;
    for (int64_t t = 0; t < T; ++t)
      for (int64_t p = 0; p < P; ++p) x[t * (C + P) + C + p] = position_bit(t, p);
    for (int64_t q = 0; q < T; ++q) {
      b.target_position.data()[(n * T + q) * T + config_.target_position] = 1;
      b.target_content.data()[(n * T + q) * T + plant] = 1;
    }
    b.planted.push_back(plant);
  }
  return b;
}

}  // namespace attn::data
