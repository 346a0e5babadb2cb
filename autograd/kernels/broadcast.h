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

// How to walk a broadcast as rows: the output seen as (rows, inner), where `inner` is the
// longest run of trailing axes along which every operand either advances one element at a
// time (stride 1: it has those axes) or stays put (stride 0: broadcast there). A row's start in
// each operand comes from BroadcastIndex once per row, so the inner loop is a plain
// (vectorisable) loop instead of a div/mod per element. E.g. x (B,T,C) + bias (C): rows B*T,
// inner C, strides 1 and 1; x (B,T,C) * scale (B,T,1): inner C, strides 1 and 0.
struct BroadcastRows {
  int64_t rows = 1, inner = 1;
  std::array<int64_t, 2> stride{};  // per operand: 1 or 0 along the inner run
};
BroadcastRows broadcast_rows(const Shape& out, const Shape& a, const Shape& b);
BroadcastRows broadcast_rows(const Shape& out, const Shape& a);

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
  const BroadcastRows plan = broadcast_rows(out_shape, a.shape(), b.shape());
  const int64_t inner = plan.inner, sa = plan.stride[0], sb = plan.stride[1];
  parallel_for(plan.rows, inner, [&](int64_t r) {
    const real* ra = pa + ia(r * inner);
    const real* rb = pb + ib(r * inner);
    real* ry = py + r * inner;
    if (sa && sb) {
      for (int64_t j = 0; j < inner; ++j) ry[j] = f(ra[j], rb[j]);
    } else if (sa) {
      const real vb = rb[0];
      for (int64_t j = 0; j < inner; ++j) ry[j] = f(ra[j], vb);
    } else if (sb) {
      const real va = ra[0];
      for (int64_t j = 0; j < inner; ++j) ry[j] = f(va, rb[j]);
    } else {
      const real v = f(ra[0], rb[0]);
      for (int64_t j = 0; j < inner; ++j) ry[j] = v;
    }
  });
  return y;
}

// Sums `grad` (shaped like a broadcast result) down to `shape`.
Tensor sum_to_shape(const Tensor& grad, const Shape& shape);
// Copies `x` expanded to `shape` (the forward of broadcasting).
Tensor broadcast_to(const Tensor& x, const Shape& shape);

}  // namespace attn::kernels
