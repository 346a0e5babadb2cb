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
// time (stride 1: it has those axes) or stays put (stride 0: broadcast there). The inner loop is
// then a plain (vectorisable) loop. E.g. x (B,T,C) + bias (C): rows B*T, inner C, strides 1
// and 1; x (B,T,C) * scale (B,T,1): inner C, strides 1 and 0.
//
// Where row r starts in an operand. The common patterns need no index arithmetic at all:
//   same shape  (B,T,C) on (B,T,C): stride 1, start r * inner
//   row         (C) or (T,C) on (B,T,C), trailing axes: stride 1, start 0
//   column      (B,T,1) on (B,T,C): stride 0, start r
//   scalar      () or (1,1) on anything: stride 0, start 0
// so start = r * row_step. Any other pattern (an operand that has some of the outer axes, like
// (B,1,C) on (B,T,C)) is `indexed`: its start comes from RowStart, a division per run of outer
// axes, once per row. tests/autograd/broadcast_rows_test.cpp checks every pattern against
// BroadcastIndex, the element-by-element definition.
inline constexpr int kMaxOperands = 3;

struct BroadcastRows {
  int64_t rows = 1, inner = 1;
  std::array<int64_t, kMaxOperands> stride{};    // per operand: 1 or 0 along the inner run
  std::array<int64_t, kMaxOperands> row_step{};  // start of row r = r * row_step ...
  std::array<bool, kMaxOperands> indexed{};      // ... unless indexed: BroadcastIndex per row
};
BroadcastRows broadcast_rows(const Shape& out, const Shape& a, const Shape& b, const Shape& c);
BroadcastRows broadcast_rows(const Shape& out, const Shape& a, const Shape& b);
BroadcastRows broadcast_rows(const Shape& out, const Shape& a);

// Row starts of operand k of a plan: r * row_step, or, for an indexed operand, from the row's
// position along the outer axes. Those are collapsed first: neighbouring axes along which the
// operand is contiguous, or broadcast along both, act as one, and extent-1 axes drop out. So
// (B,T,1,H) on (B,T,S,H) has two, (B*T) and (S): a row costs two divisions, not one per axis of
// the output (BroadcastIndex on the row's first element: four here).
class RowStart {
 public:
  RowStart(const BroadcastRows& plan, int k, const Shape& in, const Shape& out);
  int64_t operator()(int64_t r) const {
    if (!indexed_) return r * step_;
    int64_t start = 0;
    for (int axis = 0; axis < axes_; ++axis) {
      start += (r % extent_[axis]) * stride_[axis];
      r /= extent_[axis];
    }
    return start;
  }

 private:
  int64_t step_;
  bool indexed_;
  int axes_ = 0;                            // collapsed outer axes, innermost first:
  std::array<int64_t, kMaxRank> extent_{};  // their extents (product: the plan's rows)
  std::array<int64_t, kMaxRank> stride_{};  // and the operand's element stride (0: broadcast)
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
  const BroadcastRows plan = broadcast_rows(out_shape, a.shape(), b.shape());
  const RowStart start_a(plan, 0, a.shape(), out_shape), start_b(plan, 1, b.shape(), out_shape);
  const int64_t inner = plan.inner, sa = plan.stride[0], sb = plan.stride[1];
  parallel_for(plan.rows, inner, [&](int64_t r) {
    const real* ra = pa + start_a(r);
    const real* rb = pb + start_b(r);
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
