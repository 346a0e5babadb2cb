#include "nn/positional/alibi.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "autograd/error.h"

namespace attn::nn {

namespace {
// n a power of two: slope_h = r^(h+1) with r = 2^(-8/n).
std::vector<double> power_of_two_slopes(int64_t n) {
  const double ratio = std::pow(2.0, -8.0 / static_cast<double>(n));
  std::vector<double> s(static_cast<size_t>(n));
  double v = 1;
  for (auto& x : s) x = (v *= ratio);
  return s;
}
}  // namespace

std::vector<double> alibi_slopes(int64_t nhead) {
  if (nhead <= 0) throw Error(fmt::format("alibi_slopes: nhead must be positive, got {}", nhead));
  int64_t closest = 1;
  while (closest * 2 <= nhead) closest *= 2;
  std::vector<double> slopes = power_of_two_slopes(closest);
  if (closest == nhead) return slopes;
  const std::vector<double> finer = power_of_two_slopes(2 * closest);
  for (int64_t i = 0; static_cast<int64_t>(slopes.size()) < nhead; i += 2)
    slopes.push_back(finer[static_cast<size_t>(i)]);
  return slopes;
}

Tensor alibi_bias(int64_t nhead, int64_t tq, int64_t tk) {
  if (tq <= 0 || tk <= 0)
    throw Error(fmt::format("alibi_bias: tq and tk must be positive, got {} and {}", tq, tk));
  const std::vector<double> slopes = alibi_slopes(nhead);
  Tensor bias = Tensor::empty({1, nhead, tq, tk});
  real* out = bias.data();
  for (int64_t h = 0; h < nhead; ++h)
    for (int64_t i = 0; i < tq; ++i) {
      const int64_t qpos = tk - tq + i;
      for (int64_t j = 0; j < tk; ++j)
        *out++ = static_cast<real>(-slopes[static_cast<size_t>(h)] * std::llabs(qpos - j));
    }
  return bias;
}

}  // namespace attn::nn
