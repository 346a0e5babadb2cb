#include "autograd/kernels/broadcast.h"

#include <algorithm>

#include "autograd/error.h"

namespace attn::kernels {

namespace {

// Extent of `in` on output axis `axis` when `in` is aligned to the output's trailing axes.
int64_t aligned_extent(const Shape& in, const Shape& out, size_t axis) {
  const size_t offset = out.size() - in.size();
  return axis < offset ? 1 : in[axis - offset];
}

// The element stride of `in` (row-major) along every axis of `out`, 0 where it is broadcast.
std::array<int64_t, kMaxRank> aligned_strides(const Shape& in, const Shape& out) {
  std::array<int64_t, kMaxRank> strides{};
  int64_t stride = 1;
  for (size_t axis = out.size(); axis-- > 0;) {
    const int64_t extent = aligned_extent(in, out, axis);
    strides[axis] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
  return strides;
}

}  // namespace

BroadcastIndex::BroadcastIndex(const Shape& in, const Shape& out)
    : rank_(static_cast<int>(out.size())),
      in_stride_(aligned_strides(in, out)),
      identity_(in == out) {
  std::copy(out.begin(), out.end(), out_shape_.begin());
}

int64_t BroadcastIndex::operator()(int64_t flat_out) const {
  if (identity_) return flat_out;
  int64_t flat_in = 0;
  for (int axis = rank_ - 1; axis >= 0; --axis) {
    const int64_t i = flat_out % out_shape_[axis];
    flat_out /= out_shape_[axis];
    flat_in += i * in_stride_[axis];
  }
  return flat_in;
}

namespace {

// The plan for operands ins[0..count): first the inner run (trailing axes on which each operand
// keeps one stride), then how each operand's row starts follow from the row number.
BroadcastRows plan_rows(const Shape& out, const Shape* const* ins, int count) {
  BroadcastRows plan;
  std::array<int, kMaxOperands> status{-1, -1, -1};  // -1 undecided, 1 has the axes, 0 broadcast
  size_t axis = out.size();
  while (axis > 0) {
    const size_t ax = axis - 1;
    bool fits = true;
    std::array<int, kMaxOperands> next = status;
    if (out[ax] != 1) {  // an axis of extent 1 fits any run
      for (int k = 0; k < count; ++k) {
        const int st = aligned_extent(*ins[k], out, ax) == out[ax] ? 1 : 0;
        if (next[k] == -1) next[k] = st;
        fits = fits && next[k] == st;
      }
    }
    if (!fits) break;
    status = next;
    plan.inner *= out[ax];
    axis = ax;
  }
  const int64_t total = numel(out);
  plan.rows = plan.inner == 0 ? 0 : total / plan.inner;
  // The outer axes [0, axis): an operand that has all of them (ignoring extent-1 axes) starts
  // row r at r * (its row length); one broadcast along all of them starts every row at 0.
  for (int k = 0; k < count; ++k) {
    plan.stride[k] = status[k] == 0 ? 0 : 1;
    bool has_all = true, has_none = true;
    for (size_t ax = 0; ax < axis; ++ax) {
      if (out[ax] == 1) continue;
      const bool has = aligned_extent(*ins[k], out, ax) == out[ax];
      has_all = has_all && has;
      has_none = has_none && !has;
    }
    plan.indexed[k] = !has_all && !has_none;
    plan.row_step[k] = has_none ? 0 : plan.stride[k] ? plan.inner : 1;
  }
  return plan;
}

}  // namespace

RowStart::RowStart(const BroadcastRows& plan, int k, const Shape& in, const Shape& out)
    : step_(plan.row_step[k]), indexed_(plan.indexed[k]) {
  if (!indexed_) return;
  const std::array<int64_t, kMaxRank> in_stride = aligned_strides(in, out);
  // The outer axes are those before the inner run (whose extents multiply to plan.inner).
  int outer = static_cast<int>(out.size());
  for (int64_t run = 1; outer > 0 && run < plan.inner;) run *= out[--outer];
  // Collapse them, innermost first: an axis joins the run inside it when stepping it by one
  // moves the operand as far as walking the whole run does.
  for (int axis = outer - 1; axis >= 0; --axis) {
    if (out[axis] == 1) continue;
    if (axes_ > 0 && in_stride[axis] == stride_[axes_ - 1] * extent_[axes_ - 1]) {
      extent_[axes_ - 1] *= out[axis];
      continue;
    }
    extent_[axes_] = out[axis], stride_[axes_] = in_stride[axis], ++axes_;
  }
}

BroadcastRows broadcast_rows(const Shape& out, const Shape& a, const Shape& b, const Shape& c) {
  const Shape* ins[] = {&a, &b, &c};
  return plan_rows(out, ins, 3);
}

BroadcastRows broadcast_rows(const Shape& out, const Shape& a, const Shape& b) {
  const Shape* ins[] = {&a, &b};
  return plan_rows(out, ins, 2);
}

BroadcastRows broadcast_rows(const Shape& out, const Shape& a) {
  const Shape* ins[] = {&a};
  return plan_rows(out, ins, 1);
}

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  broadcast_shapes(shape, grad.shape(), "sum_to_shape");  // validates compatibility
  Tensor out(shape);
  const BroadcastRows plan = broadcast_rows(grad.shape(), shape);
  const RowStart start(plan, 0, shape, grad.shape());
  const real* g = grad.data();
  real* o = out.data();
  const int64_t inner = plan.inner;
  if (plan.stride[0]) {
    // Rows of the gradient collide on the same output elements: split by columns instead.
    const bool one_row = out.numel() == inner;
    parallel_column_blocks(inner, plan.rows, [&](int64_t j0, int64_t j1) {
      if (one_row && j1 - j0 == kColumnBlock) {
        // A whole block's sums stay in registers (8 vectors) over all the rows, instead of a
        // load and a store of the output per row; the same additions in the same order.
        real acc[kColumnBlock] = {};
        for (int64_t r = 0; r < plan.rows; ++r) {
          const real* gr = g + r * inner + j0;
#pragma omp simd
          for (int64_t j = 0; j < kColumnBlock; ++j) acc[j] += gr[j];
        }
        for (int64_t j = 0; j < kColumnBlock; ++j) o[j0 + j] += acc[j];
        return;
      }
      for (int64_t r = 0; r < plan.rows; ++r) {
        const real* __restrict gr = g + r * inner;
        real* __restrict orow = o + start(r);
#pragma omp simd
        for (int64_t j = j0; j < j1; ++j) orow[j] += gr[j];
      }
    });
  } else {
    // Each row sums into one element, and rows may share it: serial, one vectorisable pass each.
    for (int64_t r = 0; r < plan.rows; ++r) {
      const real* gr = g + r * inner;
      real total = 0;
      for (int64_t j = 0; j < inner; ++j) total += gr[j];
      o[start(r)] += total;
    }
  }
  return out;
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x.clone();
  if (broadcast_shapes(x.shape(), shape, "broadcast_to") != shape)
    throw Error("broadcast_to: cannot expand " + shape_str(x.shape()) + " to " + shape_str(shape));
  Tensor y = Tensor::empty(shape);
  const BroadcastRows plan = broadcast_rows(shape, x.shape());
  const RowStart start(plan, 0, x.shape(), shape);
  const real* px = x.data();
  real* py = y.data();
  const int64_t inner = plan.inner, stride = plan.stride[0];
  parallel_for(plan.rows, inner, [&](int64_t r) {
    const real* xr = px + start(r);
    real* yr = py + r * inner;
    if (stride)
      std::copy(xr, xr + inner, yr);
    else
      std::fill(yr, yr + inner, xr[0]);
  });
  return y;
}

}  // namespace attn::kernels
