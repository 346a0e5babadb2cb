// Linear: y = x W^T + b, PyTorch's nn.Linear (same parameter names, layout and initialisation).
//
//   attn::Generator gen(0);
//   attn::nn::Linear fc(/*in_features=*/16, /*out_features=*/32, /*bias=*/true, gen);
//   attn::Var y = fc.forward(x);          // x (..., 16) -> y (..., 32)
//   fc.named_parameters();               // {"weight", (32,16)}, {"bias", (32)}
//
// The weight is stored (out, in) as in PyTorch, so the forward pass is matmul(x, W, false, true):
// every leading axis of x is folded into the rows of one GEMM, whatever the rank of x.
// Two paths (autograd/mode.h): in reference mode the tape shows matmul then add (and relu or
// gelu as their own ops); in fast mode one op each: linear (the bias added inside the GEMM),
// linear_relu, gelu_linear (autograd/ops/fused/).
#pragma once

#include <cstdint>
#include <optional>

#include "autograd/functional.h"
#include "autograd/generator.h"
#include "nn/module.h"

namespace attn::nn {

// x (..., in), weight (out, in), bias (out) -> x W^T + b (..., out) by the path reference_mode()
// selects: matmul + add, or the linear op. For layers that hold their weights themselves
// (MultiheadAttention's packed in_proj_weight).
Var affine(const Var& x, const Var& weight, const std::optional<Var>& bias = std::nullopt);

class Linear : public Module {
 public:
  // weight kaiming_uniform_(a = sqrt(5)), bias U(-1/sqrt(in), 1/sqrt(in)), as nn.Linear.
  Linear(int64_t in_features, int64_t out_features, bool bias, Generator& gen);

  // x (..., in) -> (..., out); a rank-1 x is one row.
  Var forward(const Var& x) const;
  // relu(forward(x)): what a feed-forward block's first layer does (fast: one op, linear_relu).
  Var forward_relu(const Var& x) const;
  // forward(gelu(x, approx)): a GELU block's second layer (fast: one op, gelu_linear).
  Var forward_after_gelu(const Var& x, GeluApprox approx) const;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  bool has_bias() const { return has_bias_; }

  Var weight;  // (out, in)
  Var bias;    // (out); unset when has_bias() is false

 private:
  void check_input(const Var& x) const;  // throws unless x is (..., in)
  int64_t in_, out_;
  bool has_bias_;
};

}  // namespace attn::nn
