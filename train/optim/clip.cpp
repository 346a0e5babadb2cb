#include "train/optim/clip.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"

namespace attn::train {

double grad_norm(const std::vector<Var>& params) {
  // Accumulate in double: a float sum of many squares loses digits (PyTorch reduces per tensor
  // in float with pairwise sums; the two agree to float precision).
  double sq = 0;
  for (const Var& p : params) {
    if (!p.has_grad()) continue;
    const Tensor& g = p.grad();
    for (int64_t i = 0; i < g.numel(); ++i) sq += static_cast<double>(g[i]) * g[i];
  }
  return std::sqrt(sq);
}

double clip_grad_norm(const std::vector<Var>& params, double max_norm, bool error_if_nonfinite) {
  if (!(max_norm > 0))
    throw Error(fmt::format("clip_grad_norm: max_norm must be > 0, got {}", max_norm));
  const double total = grad_norm(params);
  if (!std::isfinite(total) && error_if_nonfinite)
    throw Error(fmt::format("clip_grad_norm: the total gradient norm is {}, cannot clip", total));
  // PyTorch multiplies even when the factor is 1 (it avoids a branch on the device); so do we.
  const auto coef = static_cast<real>(std::min(1.0, max_norm / (total + 1e-6)));
  for (Var p : params) {  // a Var copy shares the parameter's node
    if (!p.has_grad()) continue;
    Tensor& g = p.grad();
    for (int64_t i = 0; i < g.numel(); ++i) g[i] *= coef;
  }
  return total;
}

}  // namespace attn::train
