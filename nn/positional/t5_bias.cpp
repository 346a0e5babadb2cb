#include "nn/positional/t5_bias.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/init.h"

namespace attn::nn {

namespace {

void check_sizes(bool bidirectional, int64_t num_buckets, int64_t max_distance) {
  const int64_t per_direction = bidirectional ? num_buckets / 2 : num_buckets;
  if (per_direction < 2)
    throw Error(fmt::format(
        "t5_bias: num_buckets = {} leaves {} bucket(s) per direction; need at "
        "least 2 ({} >= {})",
        num_buckets, per_direction, bidirectional ? "num_buckets" : "it", bidirectional ? 4 : 2));
  if (max_distance <= per_direction / 2)
    throw Error(fmt::format("t5_bias: max_distance ({}) must exceed the exact range ({} buckets)",
                            max_distance, per_direction / 2));
}

}  // namespace

int64_t t5_relative_bucket(int64_t relative_position,
                           bool bidirectional,
                           int64_t num_buckets,
                           int64_t max_distance) {
  check_sizes(bidirectional, num_buckets, max_distance);
  int64_t offset = 0, n = 0;
  if (bidirectional) {
    num_buckets /= 2;
    if (relative_position > 0) offset = num_buckets;  // the key comes after the query
    n = relative_position < 0 ? -relative_position : relative_position;
  } else {
    n = std::max<int64_t>(-relative_position, 0);  // the future all maps to bucket 0
  }
  const int64_t max_exact = num_buckets / 2;
  if (n < max_exact) return offset + n;
  // Log-spaced: how far n is from max_exact on a log scale whose unit is the whole range up to
  // max_distance, in units of the remaining buckets. 1e-9 keeps an exact whole number (n = 16
  // with the default sizes gives 2) from rounding down to the bucket below.
  const double me = static_cast<double>(max_exact);
  const double steps = std::log(static_cast<double>(n) / me) /
                       std::log(static_cast<double>(max_distance) / me) *
                       static_cast<double>(num_buckets - max_exact);
  const int64_t large = max_exact + static_cast<int64_t>(std::floor(steps + 1e-9));
  return offset + std::min(large, num_buckets - 1);
}

RelativePositionBias::RelativePositionBias(int64_t nhead,
                                           bool bidirectional,
                                           Generator& gen,
                                           int64_t num_buckets,
                                           int64_t max_distance,
                                           double init_std)
    : Module("RelativePositionBias"),
      nhead_(nhead),
      bidirectional_(bidirectional),
      num_buckets_(num_buckets),
      max_distance_(max_distance) {
  if (nhead <= 0)
    throw Error(fmt::format("RelativePositionBias: nhead must be positive, got {}", nhead));
  check_sizes(bidirectional, num_buckets, max_distance);
  Tensor w = Tensor::empty({num_buckets, nhead});
  weight = register_parameter("weight", init::normal_(w, gen, 0.0, init_std));
}

Tensor RelativePositionBias::buckets(int64_t tq, int64_t tk) const {
  if (tq <= 0 || tk <= 0 || tq > tk)
    throw Error(fmt::format(
        "RelativePositionBias: need 0 < tq <= tk (queries are the last tq keys), got tq={} tk={}",
        tq, tk));
  Tensor ids({tq, tk});
  for (int64_t i = 0; i < tq; ++i) {
    const int64_t qpos = tk - tq + i;
    for (int64_t j = 0; j < tk; ++j)
      ids[i * tk + j] = static_cast<real>(
          t5_relative_bucket(j - qpos, bidirectional_, num_buckets_, max_distance_));
  }
  return ids;
}

Var RelativePositionBias::forward(int64_t tq, int64_t tk) const {
  // Look up one row of nhead scalars per (i, j), then bring the heads to the front.
  const Var rows = embedding(weight, buckets(tq, tk));  // (tq, tk, nhead)
  return reshape(permute(rows, {2, 0, 1}), {1, nhead_, tq, tk});
}

std::shared_ptr<RelativePositionBias> t5_model_bias(int64_t nhead,
                                                    int64_t d_model,
                                                    bool bidirectional,
                                                    Generator& gen) {
  return std::make_shared<RelativePositionBias>(nhead, bidirectional, gen, 32, 128,
                                                1.0 / std::sqrt(static_cast<double>(d_model)));
}

}  // namespace attn::nn
