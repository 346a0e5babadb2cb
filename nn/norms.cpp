#include "nn/norms.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

namespace {
void check_last_axis(const char* layer, const Var& x, int64_t c) {
  if (x.rank() < 1 || x.shape().back() != c)
    throw Error(
        fmt::format("{}({}): expected x (..., {}), got {}", layer, c, c, shape_str(x.shape())));
}
void check_size(const char* layer, int64_t c) {
  if (c <= 0) throw Error(fmt::format("{}: normalized_shape must be positive, got {}", layer, c));
}
}  // namespace

LayerNorm::LayerNorm(int64_t normalized_shape, double eps, bool elementwise_affine, bool bias)
    : Module("LayerNorm"), c_(normalized_shape), eps_(eps) {
  check_size("LayerNorm", c_);
  weight = elementwise_affine ? register_parameter("weight", Tensor::ones({c_}))
                              : Var::constant(Tensor::ones({c_}));
  this->bias = elementwise_affine && bias ? register_parameter("bias", Tensor::zeros({c_}))
                                          : Var::constant(Tensor::zeros({c_}));
}

Var LayerNorm::forward(const Var& x) const {
  check_last_axis("LayerNorm", x, c_);
  return layer_norm(x, weight, bias, static_cast<real>(eps_));
}

RMSNorm::RMSNorm(int64_t normalized_shape, double eps)
    : Module("RMSNorm"), c_(normalized_shape), eps_(eps) {
  check_size("RMSNorm", c_);
  weight = register_parameter("weight", Tensor::ones({c_}));
}

Var RMSNorm::forward(const Var& x) const {
  check_last_axis("RMSNorm", x, c_);
  return rms_norm(x, weight, static_cast<real>(eps_));
}

}  // namespace attn::nn
