// Normalisation layers over the last axis: LayerNorm (PyTorch's nn.LayerNorm) and RMSNorm.
//
//   attn::nn::LayerNorm ln(64);            // weight (64) = 1, bias (64) = 0, eps 1e-5
//   attn::Var y = ln.forward(x);           // x (..., 64) -> (..., 64)
//   attn::nn::RMSNorm rms(64);             // weight (64) = 1, eps 1e-6
//   attn::Var z = rms.forward(x);
//
// LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias, mean and (biased) variance over
// the last axis. RMSNorm (Zhang & Sennrich 2019, used by llama): y = x / sqrt(mean(x^2) + eps)
// * weight — no centring and no bias, one reduction cheaper. PyTorch >= 2.4 has nn.RMSNorm with
// the same parameter name; its default eps is the dtype's machine epsilon, ours is llama's 1e-6.
// Both call the fused ops attn::layer_norm / attn::rms_norm (autograd/ops/).
#pragma once

#include <cstdint>

#include "nn/module.h"

namespace attn::nn {

class LayerNorm : public Module {
 public:
  // elementwise_affine = false: no parameters at all (weight 1, bias 0 as constants).
  // bias = false: a learned weight only (PyTorch >= 2.1's LayerNorm(bias=False)).
  explicit LayerNorm(int64_t normalized_shape,
                     double eps = 1e-5,
                     bool elementwise_affine = true,
                     bool bias = true);

  Var forward(const Var& x) const;  // x (..., C) -> (..., C)

  int64_t normalized_shape() const { return c_; }
  double eps() const { return eps_; }

  Var weight;  // (C)
  Var bias;    // (C)

 private:
  int64_t c_;
  double eps_;
};

class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t normalized_shape, double eps = 1e-6);

  Var forward(const Var& x) const;  // x (..., C) -> (..., C)

  int64_t normalized_shape() const { return c_; }
  double eps() const { return eps_; }

  Var weight;  // (C)

 private:
  int64_t c_;
  double eps_;
};

}  // namespace attn::nn
