// A layer attnlab does not have, added from outside it: the soft cap.
//
//   attn::Var y = coursework::soft_cap(x, cap);      // the op: cap * tanh(x / cap)
//   coursework::SoftCap layer(16);                   // the layer: one learned cap per feature
//   attn::Var z = layer.forward(x);                  // x (..., 16) -> z (..., 16)
//
// soft_cap(x, c) = c tanh(x / c) is close to x while |x| << c and never leaves (-c, c): a
// smooth clip whose level c is learned (Gemma caps its attention logits this way, with a
// fixed c). It shows the three steps of a new op: a struct deriving from attn::Op with forward
// and backward side by side, a function that records it on the tape, and a gradient check in
// double precision (check_gradients.cpp).
#pragma once

#include <cstdint>

#include <attnlab/autograd/tape.h>
#include <attnlab/nn/module.h>

namespace coursework {

// x (..., C), cap (C) -> (..., C). cap must be positive.
attn::Var soft_cap(const attn::Var& x, const attn::Var& cap);

class SoftCap : public attn::nn::Module {
 public:
  // Every cap starts at `initial_cap`.
  explicit SoftCap(int64_t features, double initial_cap = 2.0);
  attn::Var forward(const attn::Var& x) const { return soft_cap(x, cap); }

  attn::Var cap;  // (features), saved as "cap" in the state dict
};

}  // namespace coursework
