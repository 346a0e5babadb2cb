// Linear: y = x W^T + b, PyTorch's nn.Linear (same parameter names, layout and initialisation).
//
//   attn::Generator gen(0);
//   attn::nn::Linear fc(/*in_features=*/16, /*out_features=*/32, /*bias=*/true, gen);
//   attn::Var y = fc.forward(x);          // x (..., 16) -> y (..., 32)
//   fc.named_parameters();               // {"weight", (32,16)}, {"bias", (32)}
//
// The weight is stored (out, in) as in PyTorch, so the forward pass is matmul(x, W, false, true):
// every leading axis of x is folded into the rows of one GEMM, whatever the rank of x.
#pragma once

#include <cstdint>

#include "autograd/functional.h"
#include "autograd/generator.h"
#include "nn/module.h"

namespace attn::nn {

class Linear : public Module {
 public:
  // weight kaiming_uniform_(a = sqrt(5)), bias U(-1/sqrt(in), 1/sqrt(in)), as nn.Linear.
  Linear(int64_t in_features, int64_t out_features, bool bias, Generator& gen);

  // x (..., in) -> (..., out); a rank-1 x is one row.
  Var forward(const Var& x) const;
  // relu(forward(x)) as one fused op (linear_relu): what a feed-forward block's first layer does.
  Var forward_relu(const Var& x) const;
  // forward(gelu(x, approx)) as one fused op (gelu_linear): a GELU block's second layer.
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
