#include "nn/linear.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/init.h"

namespace attn::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, Generator& gen)
    : Module("Linear"), in_(in_features), out_(out_features), has_bias_(bias) {
  if (in_features <= 0 || out_features <= 0)
    throw Error(fmt::format("Linear: in_features and out_features must be positive, got {} and {}",
                            in_features, out_features));
  weight = register_parameter("weight", init::linear_weight(out_features, in_features, gen));
  if (bias)
    this->bias = register_parameter("bias", init::linear_bias(out_features, in_features, gen));
}

Var Linear::forward(const Var& x) const {
  check_input(x);
  // (..., in) (out, in)^T + (out) -> (..., out)
  return has_bias_ ? linear(x, weight, bias) : linear(x, weight);
}

Var Linear::forward_relu(const Var& x) const {
  check_input(x);
  return has_bias_ ? linear_relu(x, weight, bias) : linear_relu(x, weight);
}

Var Linear::forward_after_gelu(const Var& x, GeluApprox approx) const {
  check_input(x);
  return has_bias_ ? gelu_linear(x, weight, bias, approx) : gelu_linear(x, weight, {}, approx);
}

void Linear::check_input(const Var& x) const {
  if (x.rank() < 1 || x.shape().back() != in_)
    throw Error(fmt::format("Linear({}, {}): expected x (..., {}), got {}", in_, out_, in_,
                            shape_str(x.shape())));
}

}  // namespace attn::nn
