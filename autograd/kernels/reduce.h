// Reductions over one axis, viewing x as (outer, n, inner) around that axis.
//
//   AxisSplit s(x.shape(), axis, "sum");      // validates the axis, names the op in errors
//   Tensor y = sum_axis(x, s, keepdim);        // (outer, inner) [with a 1 kept at axis]
//   Tensor dx = expand_axis(dy, s, x.shape(), scale);  // broadcast back along the axis
//   AxisMax m = max_axis(x, s, keepdim, "max");  // values and the first argmax of each slice
//   Tensor dx = scatter_axis(dy, m.argmax, s, x.shape());  // dy back to the argmax positions
#pragma once

#include <vector>

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

// The sum of every element, accumulated in double (float sums of many terms drift).
double sum_all(const Tensor& x);

Tensor sum_axis(const Tensor& x, const AxisSplit& s, bool keepdim);
// y[o, k, i] = scale * g[o, i]: g shaped like the reduction (with or without the kept axis).
Tensor expand_axis(const Tensor& g, const AxisSplit& s, const Shape& x_shape, real scale);

struct AxisMax {
  Tensor values;                // the reduced shape
  std::vector<int64_t> argmax;  // per (o, i): the k of the first maximum along the axis
};
// values[o, i] = max_k x[o, k, i]. Ties go to the smallest k, as PyTorch's max(dim); a NaN
// wins over every number (the first NaN, as PyTorch propagates NaN). The axis must not be empty.
AxisMax max_axis(const Tensor& x, const AxisSplit& s, bool keepdim, const char* op);
// dx[o, k, i] = g[o, i] if k == argmax[o, i] else 0.
Tensor scatter_axis(const Tensor& g,
                    const std::vector<int64_t>& argmax,
                    const AxisSplit& s,
                    const Shape& x_shape);

}  // namespace attn::kernels
