#include "autograd/kernels/reduce.h"

#include "autograd/kernels/parallel.h"

namespace attn::kernels {

AxisSplit::AxisSplit(const Shape& shape, int ax, const char* op) {
  axis = norm_axis(ax, static_cast<int>(shape.size()), op);
  if (shape.empty()) return;
  for (int i = 0; i < axis; ++i) outer *= shape[i];
  n = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
}

Shape AxisSplit::reduced_shape(const Shape& shape, bool keepdim) const {
  Shape out = shape;
  if (out.empty()) return out;
  if (keepdim)
    out[axis] = 1;
  else
    out.erase(out.begin() + axis);
  return out;
}

Tensor sum_axis(const Tensor& x, const AxisSplit& s, bool keepdim) {
  Tensor y(s.reduced_shape(x.shape(), keepdim));
  const real* px = x.data();
  real* py = y.data();
  parallel_for(s.outer, s.n * s.inner, [&](int64_t o) {
    for (int64_t k = 0; k < s.n; ++k)
      for (int64_t i = 0; i < s.inner; ++i) py[o * s.inner + i] += px[(o * s.n + k) * s.inner + i];
  });
  return y;
}

Tensor expand_axis(const Tensor& g, const AxisSplit& s, const Shape& x_shape, real scale) {
  Tensor dx = Tensor::empty(x_shape);
  const real* pg = g.data();
  real* pd = dx.data();
  parallel_for(s.outer, s.n * s.inner, [&](int64_t o) {
    for (int64_t k = 0; k < s.n; ++k)
      for (int64_t i = 0; i < s.inner; ++i)
        pd[(o * s.n + k) * s.inner + i] = scale * pg[o * s.inner + i];
  });
  return dx;
}

}  // namespace attn::kernels
