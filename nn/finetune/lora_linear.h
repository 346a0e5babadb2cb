// LoraLinear: low-rank adaptation (LoRA, Hu et al. 2021) of a trained Linear. The weight and
// bias are frozen; the update is a product of two thin matrices, W' = W + (alpha / r) B A with
// A (r, in) and B (out, r), so a rank-r update trains r (in + out) values.
//
//   attn::nn::Linear fc(16, 32, true, gen);                    // ... trained on task A
//   attn::nn::LoraLinear lora(fc, /*rank=*/2, /*alpha=*/2, gen);  // B = 0: exactly fc at first
//   attn::Var y = lora.forward(x);                             // x (..., 16) -> (..., 32)
//   lora.named_parameters();                                   // {"lora_A", (2,16)}, {"lora_B",
//   (32,2)}
//
// As PEFT initialises it: A kaiming_uniform_(a = sqrt(5)) (nn.Linear's weight rule), B zeros, so
// fine-tuning starts from the trained layer. The forward pass never forms B A: y = x W^T + b +
// (alpha / r) (x A^T) B^T. No PyTorch twin in torch itself (docs/checkpoint-format.md names the
// state: buffers weight (out,in), bias (out); parameters lora_A, lora_B, PEFT's names).
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

class LoraLinear : public Module {
 public:
  // Copies base's weight and bias (the base layer is not referred to afterwards). Throws
  // attn::Error for rank outside [1, min(in, out)] or alpha <= 0.
  LoraLinear(const Linear& base, int64_t rank, double alpha, Generator& gen);

  // x (..., in) -> (..., out).
  Var forward(const Var& x) const;

  int64_t rank() const { return rank_; }
  double scaling() const { return alpha_ / static_cast<double>(rank_); }

  Var lora_A;  // (r, in)
  Var lora_B;  // (out, r), zeros at first

 private:
  int64_t in_, out_, rank_;
  double alpha_;
  bool has_bias_;
  Tensor weight_, bias_;  // frozen: (out, in), (out)
};

}  // namespace attn::nn
