// CausalConv1d: a depthwise 1-d convolution over time that only looks back, PyTorch's
// nn.Conv1d(E, E, K, groups=E, padding=K-1) with its output cut to the first T steps (how Mamba
// uses it before the selective scan).
//
//   attn::nn::CausalConv1d conv(/*channels=*/64, /*kernel=*/4, gen);
//   Var y = conv.forward(x);                    // x (B,T,64) -> y (B,T,64)
//   Var buf = conv.initial_buffer(/*batch=*/2); // decoding: the last K-1 inputs, zeros at first
//   Var y_t = conv.step(x_t, buf);              // x_t (B,1,64) -> (B,1,64); buf moves on
//
//   y_t[e] = bias[e] + sum_{k=0}^{K-1} weight[e,0,k] x_{t-(K-1)+k}[e],   x_s = 0 for s < 0
//
// Each channel has its own K taps (depthwise: no mixing across channels); weight[e,0,K-1]
// multiplies the current step. Built from elementary ops on both paths (concat with zeros, then
// K slice-mul-add terms): O(B T E K), small next to the projections around it.
// Parameters as nn.Conv1d: weight (E,1,K), bias (E), initialised U(-1/sqrt(K), 1/sqrt(K)).
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/module.h"

namespace attn::nn {

class CausalConv1d : public Module {
 public:
  CausalConv1d(int64_t channels, int64_t kernel, Generator& gen);

  Var forward(const Var& x) const;              // x (B,T,E) -> (B,T,E)
  Var initial_buffer(int64_t batch) const;      // (B,K-1,E) zeros
  Var step(const Var& x_t, Var& buffer) const;  // x_t (B,1,E) -> (B,1,E); updates buffer

  int64_t channels() const { return channels_; }
  int64_t kernel() const { return kernel_; }

  Var weight;  // (E,1,K)
  Var bias;    // (E)

 private:
  // sum_k slice(padded, k, k+steps) * weight[:,0,k] + bias: padded (B,steps+K-1,E) -> (B,steps,E)
  Var taps(const Var& padded, int64_t steps) const;
  int64_t channels_, kernel_;
};

}  // namespace attn::nn
