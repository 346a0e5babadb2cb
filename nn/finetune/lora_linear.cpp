#include "nn/finetune/lora_linear.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/init.h"

namespace attn::nn {

LoraLinear::LoraLinear(const Linear& base, int64_t rank, double alpha, Generator& gen)
    : Module("LoraLinear"),
      in_(base.in_features()),
      out_(base.out_features()),
      rank_(rank),
      alpha_(alpha),
      has_bias_(base.has_bias()) {
  if (rank < 1 || rank > std::min(in_, out_))
    throw Error(fmt::format("LoraLinear: rank must be in [1, {}] for a ({}, {}) weight, got {}",
                            std::min(in_, out_), out_, in_, rank));
  if (!(alpha > 0)) throw Error(fmt::format("LoraLinear: alpha must be positive, got {}", alpha));
  weight_ = register_buffer("weight", base.weight.value().clone());
  if (has_bias_) bias_ = register_buffer("bias", base.bias.value().clone());
  Tensor a({rank, in_});
  init::kaiming_uniform_(a, gen, std::sqrt(5.0));
  lora_A = register_parameter("lora_A", a);
  lora_B = register_parameter("lora_B", Tensor::zeros({out_, rank}));
}

Var LoraLinear::forward(const Var& x) const {
  if (x.rank() < 2 || x.size(x.rank() - 1) != in_)
    throw Error(
        fmt::format("LoraLinear: input must be (..., {}), got {}", in_, shape_str(x.shape())));
  const Var frozen = affine(x, Var::constant(weight_),
                            has_bias_ ? std::optional<Var>(Var::constant(bias_)) : std::nullopt);
  // (..., in) (r, in)^T -> (..., r) -> (..., r) (out, r)^T -> (..., out), scaled by alpha / r.
  const Var low = matmul(matmul(x, lora_A, false, true), lora_B, false, true);
  return add(frozen, mul_scalar(low, static_cast<real>(scaling())));
}

}  // namespace attn::nn
