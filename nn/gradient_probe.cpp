#include "nn/gradient_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

std::vector<double> GradientProbe::relative() const {
  const double top = norms.empty() ? 0 : *std::max_element(norms.begin(), norms.end());
  std::vector<double> out(norms.size(), 0.0);
  if (top > 0)
    for (size_t t = 0; t < norms.size(); ++t) out[t] = norms[t] / top;
  return out;
}

GradientProbe probe_gradient_flow(const Tensor& x,
                                  const std::function<Var(const Var&)>& loss_fn,
                                  int time_axis) {
  if (time_axis < 0) time_axis += x.rank();
  if (time_axis < 0 || time_axis >= x.rank())
    throw Error(
        fmt::format("probe_gradient_flow: time axis out of range for x {}", shape_str(x.shape())));
  Var leaf(x.clone(), true);
  Var loss = loss_fn(leaf);
  if (loss.numel() != 1)
    throw Error(fmt::format("probe_gradient_flow: the loss must be a scalar, got shape {}",
                            shape_str(loss.shape())));
  GradientProbe probe;
  const int64_t steps = x.size(time_axis);
  probe.norms.assign(steps, 0.0);
  if (!loss.requires_grad()) return probe;  // the loss ignores x: every norm is 0
  loss.backward();
  if (!leaf.has_grad()) return probe;
  // View the gradient as (outer, T, inner) and sum squares per t.
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < time_axis; ++d) outer *= x.size(d);
  for (int d = time_axis + 1; d < x.rank(); ++d) inner *= x.size(d);
  const real* g = leaf.grad().data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t i = 0; i < inner; ++i) {
        const double v = g[(o * steps + t) * inner + i];
        probe.norms[t] += v * v;
      }
  for (double& n : probe.norms) n = std::sqrt(n);
  return probe;
}

Var readout_loss(const Var& y, int64_t position, const Tensor& readout) {
  if (y.rank() != 3 || readout.shape() != Shape{y.size(0), y.size(2)} || position < 0 ||
      position >= y.size(1))
    throw Error(
        fmt::format("readout_loss: need y (B,T,H), readout (B,H), 0 <= position < T; got "
                    "y {}, readout {}, position {}",
                    shape_str(y.shape()), shape_str(readout.shape()), position));
  const Var at = reshape(slice(y, 1, position, position + 1), {y.size(0), y.size(2)});
  return sum(mul(at, Var::constant(readout)));
}

}  // namespace attn::nn
