// Elementwise maps over same-shaped tensors: the loop every unary op shares.
//
//   Tensor y  = kernels::map(x, [](real v) { return std::exp(v); }, kernels::kCostTranscendental);
//   Tensor dx = kernels::zip(dy, y, [](real g, real e) { return g * e; });   // d exp = exp
//
// A unary op's forward is map(x, f) and its backward is zip(dy, saved, g) with
// g(dy_i, saved_i) = dy_i * f'(x_i), the chain rule for a function applied element by element
// (the Jacobian is diagonal, so no sums are needed). `cost` is roughly how many simple
// operations one element takes; parallel_for uses threads only when n * cost is large.
#pragma once

#include <cmath>

#include "autograd/kernels/parallel.h"
#include "autograd/tensor.h"

namespace attn::kernels {

inline constexpr int64_t kCostArithmetic = 1;      // +, *, compare
inline constexpr int64_t kCostTranscendental = 8;  // exp, log, erf, tanh, pow

// y_i = f(x_i)
template <class F>
Tensor map(const Tensor& x, F f, int64_t cost = kCostArithmetic) {
  Tensor y = Tensor::empty(x.shape());
  const real* px = x.data();
  real* py = y.data();
  parallel_for(x.numel(), cost, [&](int64_t i) { py[i] = f(px[i]); });
  return y;
}

// y_i = f(a_i, b_i) for a and b of one shape (no broadcasting: see broadcast.h for that).
template <class F>
Tensor zip(const Tensor& a, const Tensor& b, F f, int64_t cost = kCostArithmetic) {
  check_same_shape(a, b, "kernels::zip");
  Tensor y = Tensor::empty(a.shape());
  const real* pa = a.data();
  const real* pb = b.data();
  real* py = y.data();
  parallel_for(a.numel(), cost, [&](int64_t i) { py[i] = f(pa[i], pb[i]); });
  return y;
}

// 1 / (1 + e^-v) without overflow: e^-v is only formed for v >= 0 (where it is <= 1); for
// v < 0 the equal form e^v / (1 + e^v) is used. Shared by sigmoid and silu.
inline real stable_sigmoid(real v) {
  if (v >= 0) return 1 / (1 + std::exp(-v));
  const real e = std::exp(v);
  return e / (1 + e);
}

}  // namespace attn::kernels
