#include "nn/ssm/causal_conv1d.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/init.h"

namespace attn::nn {

CausalConv1d::CausalConv1d(int64_t channels, int64_t kernel, Generator& gen)
    : Module("CausalConv1d"), channels_(channels), kernel_(kernel) {
  if (channels < 1 || kernel < 1)
    throw Error(fmt::format("CausalConv1d: channels and kernel must be >= 1, got {} and {}",
                            channels, kernel));
  // nn.Conv1d's defaults: fan_in = (in_channels / groups) * K = K.
  Tensor w = Tensor::empty({channels, 1, kernel});
  init::kaiming_uniform_(w, gen, std::sqrt(5.0));
  weight = register_parameter("weight", w);
  Tensor b = Tensor::empty({channels});
  const double bound = 1.0 / std::sqrt(static_cast<double>(kernel));
  init::uniform_(b, gen, -bound, bound);
  bias = register_parameter("bias", b);
}

Var CausalConv1d::taps(const Var& padded, int64_t steps) const {
  const Var w = reshape(weight, {channels_, kernel_});
  Var y;
  for (int64_t k = 0; k < kernel_; ++k) {
    const Var term =
        mul(slice(padded, 1, k, k + steps), reshape(slice(w, 1, k, k + 1), {channels_}));
    y = k == 0 ? term : add(y, term);
  }
  return add(y, bias);
}

Var CausalConv1d::forward(const Var& x) const {
  if (x.rank() != 3 || x.size(2) != channels_)
    throw Error(
        fmt::format("CausalConv1d: expected x (B,T,{}), got {}", channels_, shape_str(x.shape())));
  if (kernel_ == 1) return taps(x, x.size(1));
  const Var zeros = Var::constant(Tensor::zeros({x.size(0), kernel_ - 1, channels_}));
  return taps(concat({zeros, x}, 1), x.size(1));
}

Var CausalConv1d::initial_buffer(int64_t batch) const {
  return Var::constant(Tensor::zeros({batch, kernel_ - 1, channels_}));
}

Var CausalConv1d::step(const Var& x_t, Var& buffer) const {
  if (x_t.rank() != 3 || x_t.size(1) != 1 || x_t.size(2) != channels_)
    throw Error(fmt::format("CausalConv1d::step: expected x_t (B,1,{}), got {}", channels_,
                            shape_str(x_t.shape())));
  if (kernel_ == 1) return taps(x_t, 1);
  const Var window = concat({buffer, x_t}, 1);  // (B,K,E): the last K inputs
  buffer = slice(window, 1, 1, kernel_);
  return taps(window, 1);
}

}  // namespace attn::nn
