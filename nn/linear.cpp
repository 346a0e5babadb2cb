#include "nn/linear.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "nn/init.h"

namespace attn::nn {

namespace {

// The reference path: y = matmul(x, W^T), then + b, two ops on the tape. matmul needs rows, so
// a single vector x (in) is one row (1, in) for the product.
Var matmul_add(const Var& x, const Var& weight, const std::optional<Var>& bias) {
  const bool vector = x.rank() == 1;
  Var y = matmul(vector ? reshape(x, {1, x.size(0)}) : x, weight, false, true);
  if (vector) y = reshape(y, {weight.size(0)});
  return bias ? add(y, *bias) : y;
}

std::optional<Var> bias_of(bool has_bias, const Var& bias) {
  return has_bias ? std::optional<Var>(bias) : std::nullopt;
}

}  // namespace

Var affine(const Var& x, const Var& weight, const std::optional<Var>& bias) {
  return reference_mode() ? matmul_add(x, weight, bias) : linear(x, weight, bias);
}

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
  return affine(x, weight, bias_of(has_bias_, bias));
}

Var Linear::forward_relu(const Var& x) const {
  check_input(x);
  if (reference_mode()) return relu(matmul_add(x, weight, bias_of(has_bias_, bias)));
  return linear_relu(x, weight, bias_of(has_bias_, bias));
}

Var Linear::forward_after_gelu(const Var& x, GeluApprox approx) const {
  check_input(x);
  if (reference_mode()) return matmul_add(gelu(x, approx), weight, bias_of(has_bias_, bias));
  return gelu_linear(x, weight, bias_of(has_bias_, bias), approx);
}

void Linear::check_input(const Var& x) const {
  if (x.rank() < 1 || x.shape().back() != in_)
    throw Error(fmt::format("Linear({}, {}): expected x (..., {}), got {}", in_, out_, in_,
                            shape_str(x.shape())));
}

}  // namespace attn::nn
