// SvfLinear: Transformer²'s singular value fine-tuning of a trained Linear. The weight is
// decomposed once, W = U diag(s) V^T; U, s, V (and the bias) are frozen, and the only parameter
// is z, one scale per singular value: W' = U diag(s ⊙ z) V^T.
//
//   attn::nn::Linear fc(16, 32, true, gen);        // ... trained on task A
//   attn::nn::SvfLinear svf(fc);                    // z = 1: exactly fc (to float rounding)
//   attn::Var y = svf.forward(x);                   // x (..., 16) -> (..., 32), learns z
//   svf.named_parameters();                         // {"z", (16)}: min(out, in) values
//   attn::Var y2 = svf.forward_with(x, z_other);    // the same layer under another z-vector
//
// The forward pass never forms W': y = ((x V) ⊙ (s ⊙ z)) U^T + b, two thin matmuls and a scale,
// so the gradient reaches z through the (..., k) activations: dL/dz_j = s_j sum (x V)_j (dy U)_j.
// Two z-vectors of the same layer mix linearly (forward_with(x, a z1 + (1 - a) z2)), what
// Transformer²'s second pass does. No PyTorch twin (docs/checkpoint-format.md names the state:
// buffers u (out,k), s (k), v (in,k), bias (out); parameter z (k)).
#pragma once

#include <cstdint>

#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

class SvfLinear : public Module {
 public:
  // Decomposes base.weight (out, in) by autograd/linalg/svd.h; copies the bias. The base layer
  // is not changed and not referred to afterwards.
  explicit SvfLinear(const Linear& base);

  // x (..., in) -> (..., out) with the layer's own z.
  Var forward(const Var& x) const;
  // The same with another z-vector (k), e.g. a stored expert or a mixture; throws attn::Error
  // naming both shapes when z is not (k).
  Var forward_with(const Var& x, const Var& z) const;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  int64_t num_singular() const { return k_; }  // k = min(out, in), the length of z
  const Tensor& singular_values() const { return s_; }

  Var z;  // (k), initialised to 1

 private:
  int64_t in_, out_, k_;
  bool has_bias_;
  Tensor u_, s_, v_, bias_;  // frozen: (out,k), (k), (in,k), (out)
};

}  // namespace attn::nn
