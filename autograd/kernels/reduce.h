// Reductions over one axis, viewing x as (outer, n, inner) around that axis.
//
//   AxisSplit s(x.shape(), axis, "sum");      // validates the axis, names the op in errors
//   Tensor y = sum_axis(x, s, keepdim);        // (outer, inner) [with a 1 kept at axis]
//   Tensor dx = expand_axis(dy, s, x.shape(), scale);  // broadcast back along the axis
#pragma once

#include "autograd/tensor.h"

namespace attn::kernels {

struct AxisSplit {
  AxisSplit() = default;
  AxisSplit(const Shape& shape, int axis, const char* op);
  int axis = 0;
  int64_t outer = 1, n = 1, inner = 1;
  // The reduced shape, with or without the kept axis of extent 1.
  Shape reduced_shape(const Shape& shape, bool keepdim) const;
};

Tensor sum_axis(const Tensor& x, const AxisSplit& s, bool keepdim);
// y[o, k, i] = scale * g[o, i]: g shaped like the reduction (with or without the kept axis).
Tensor expand_axis(const Tensor& g, const AxisSplit& s, const Shape& x_shape, real scale);

}  // namespace attn::kernels
