// numpy broadcasting for elementwise kernels, and its adjoint for their gradients.
//
//   Tensor y = broadcast_binary(a, b, "add", [](real x, real y) { return x + y; });
//   Tensor da = sum_to_shape(dy, a.shape());   // undo broadcasting: sum over expanded axes
//
// If y = f(broadcast(a)), then dL/da is dL/dy summed over every axis that broadcasting
// expanded (a leading axis a lacked, or an axis where a had extent 1).
#pragma once

#include <array>

#include "autograd/kernels/parallel.h"
#include "autograd/tensor.h"

namespace attn::kernels {

// For an output index (flat), the flat index into an input that was broadcast to `out`.
// Precomputes per-axis strides of the input aligned to the output's rank (0 on broadcast axes).
class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& in, const Shape& out);
  int64_t operator()(int64_t flat_out) const;
  bool identity() const { return identity_; }

 private:
  int rank_;
  std::array<int64_t, kMaxRank> out_shape_{};
  std::array<int64_t, kMaxRank> in_stride_{};
  bool identity_;
};

template <class F>
Tensor broadcast_binary(const Tensor& a, const Tensor& b, const char* op, F f) {
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor y = Tensor::empty(out_shape);
  const real* pa = a.data();
  const real* pb = b.data();
  real* py = y.data();
  const int64_t n = y.numel();
  if (a.shape() == b.shape()) {
    parallel_for(n, 1, [&](int64_t i) { py[i] = f(pa[i], pb[i]); });
    return y;
  }
  const BroadcastIndex ia(a.shape(), out_shape), ib(b.shape(), out_shape);
  parallel_for(n, 4, [&](int64_t i) { py[i] = f(pa[ia(i)], pb[ib(i)]); });
  return y;
}

// Sums `grad` (shaped like a broadcast result) down to `shape`.
Tensor sum_to_shape(const Tensor& grad, const Shape& shape);
// Copies `x` expanded to `shape` (the forward of broadcasting).
Tensor broadcast_to(const Tensor& x, const Shape& shape);

}  // namespace attn::kernels
