#include "autograd/kernels/reduce.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
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

namespace {

// Sum of a contiguous row in eight interleaved partial sums: independent accumulators the
// compiler keeps in one SIMD register (a single running sum would serialise on add latency).
real sum_row(const real* row, int64_t n) {
  real part[8] = {};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int j = 0; j < 8; ++j) part[j] += row[k + j];
  real total = 0;
  for (; k < n; ++k) total += row[k];
  for (int j = 0; j < 8; ++j) total += part[j];
  return total;
}

}  // namespace

double sum_all(const Tensor& x) {
  const real* px = x.data();
  double total = 0;
  for (int64_t i = 0; i < x.numel(); ++i) total += px[i];
  return total;
}

Tensor sum_axis(const Tensor& x, const AxisSplit& s, bool keepdim) {
  Tensor y(s.reduced_shape(x.shape(), keepdim));
  const real* px = x.data();
  real* py = y.data();
  if (s.inner == 1) {  // the last axis: each output is one contiguous row
    parallel_for(s.outer, s.n, [&](int64_t o) { py[o] = sum_row(px + o * s.n, s.n); });
    return y;
  }
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

AxisMax max_axis(const Tensor& x, const AxisSplit& s, bool keepdim, const char* op) {
  if (s.n == 0)
    throw Error(fmt::format("{}: cannot take the maximum over axis {} of extent 0 (shape {})", op,
                            s.axis, shape_str(x.shape())));
  AxisMax m{Tensor::empty(s.reduced_shape(x.shape(), keepdim)),
            std::vector<int64_t>(s.outer * s.inner)};
  const real* px = x.data();
  real* pv = m.values.data();
  parallel_for(s.outer, s.n * s.inner, [&](int64_t o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const real* col = px + o * s.n * s.inner + i;  // x[o, k, i] = col[k * inner]
      int64_t best = 0;
      for (int64_t k = 1; k < s.n && !std::isnan(col[best * s.inner]); ++k) {
        const real v = col[k * s.inner];
        if (v > col[best * s.inner] || std::isnan(v)) best = k;  // strict >: first max wins
      }
      m.argmax[o * s.inner + i] = best;
      pv[o * s.inner + i] = col[best * s.inner];
    }
  });
  return m;
}

Tensor scatter_axis(const Tensor& g,
                    const std::vector<int64_t>& argmax,
                    const AxisSplit& s,
                    const Shape& x_shape) {
  Tensor dx(x_shape);  // zeros: only the argmax positions receive a gradient
  const real* pg = g.data();
  real* pd = dx.data();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t j = o * s.inner + i;
      pd[(o * s.n + argmax[j]) * s.inner + i] = pg[j];
    }
  return dx;
}

}  // namespace attn::kernels
