// MaskedSoftmaxOp: y = softmax(x.masked_fill(mask, lowest)) over the last axis, in one pass.
// Attention's masked scores went through masked_fill and then softmax: two passes over the
// (B,H,Tq,Tk) scores forward, two backward, and a filled copy in between. This op reads each
// mask row where it needs it instead.
//
// Replaces (reference path, autograd/mode.h): masked_fill(x, mask, lowest) -> softmax.
// Measured: not on its own; it came in one line with kernels::gemm_split (W1 0.85, W4 0.93, W2
// 0.93 of the time before that round, docs/performance.md), so its own share is not known.
// Proven equal to masked_fill -> softmax by tests/nn/reference_mode_test.cpp (the padded and
// masked attention rows) and checked on its own by its op registry row.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

namespace {

// Where row r of x (all axes but the last) finds its mask row, the mask broadcast over x's
// leading axes: offset = sum_a coord_a(r) * stride_a, with stride 0 on the mask's size-1 axes.
struct MaskRows {
  std::vector<int64_t> x_sizes, strides;  // leading axes of x; the mask's strides (0 = repeat)

  MaskRows(const Shape& x, const Shape& mask) {
    const size_t lead = x.size() - 1, pad = x.size() - mask.size();
    x_sizes.assign(x.begin(), x.end() - 1);
    strides.assign(lead, 0);
    int64_t stride = mask.back();
    for (size_t a = lead; a-- > pad;) {
      const int64_t m = mask[a - pad];
      strides[a] = m == 1 ? 0 : stride;
      stride *= m;
    }
  }

  int64_t offset(int64_t r) const {
    int64_t off = 0;
    for (size_t a = x_sizes.size(); a-- > 0;) {
      off += (r % x_sizes[a]) * strides[a];
      r /= x_sizes[a];
    }
    return off;
  }
};

}  // namespace

struct MaskedSoftmaxOp final : Op {
  Tensor y, mask;  // the derivative needs y; masked positions get no gradient

  // x (...,C), mask (...,C) of 0/1 broadcastable to x over the leading axes -> y (x's shape).
  // y_i = exp(z_i - m) / sum_j exp(z_j - m) with z = x where mask is 0 and z = lowest() where
  // it is 1, m = max_j z_j. A row with every position masked comes out uniform, as
  // softmax(masked_fill(x, mask, lowest)) does.
  Tensor forward(const Tensor& x, const Tensor& m) {
    if (x.rank() == 0 || m.rank() == 0 || m.rank() > x.rank() ||
        m.shape().back() != x.shape().back())
      throw Error(
          fmt::format("masked_softmax: mask {} must match x {} on the last axis and "
                      "broadcast over the others",
                      shape_str(m.shape()), shape_str(x.shape())));
    for (int a = 1; a < m.rank(); ++a) {
      const int64_t ms = m.shape()[m.rank() - 1 - a], xs = x.shape()[x.rank() - 1 - a];
      if (ms != 1 && ms != xs)
        throw Error(fmt::format("masked_softmax: mask {} does not broadcast to x {}",
                                shape_str(m.shape()), shape_str(x.shape())));
    }
    mask = m;
    const int64_t c = x.shape().back(), rows = x.numel() / std::max<int64_t>(c, 1);
    const MaskRows where(x.shape(), m.shape());
    y = Tensor::empty(x.shape());
    const real* px = x.data();
    const real* pm = m.data();
    real* py = y.data();
    constexpr real hidden = std::numeric_limits<real>::lowest();
    kernels::parallel_for(rows, c * 5, [&](int64_t r) {
      const real* xr = px + r * c;
      const real* mr = pm + where.offset(r);
      real* yr = py + r * c;
      for (int64_t j = 0; j < c; ++j) yr[j] = mr[j] != 0 ? hidden : xr[j];
      kernels::softmax_row(yr, yr, c);
    });
    return y;
  }

  // As softmax: dx_j = y_j (dy_j - sum_i dy_i y_i), then 0 where masked (z_j is a constant).
  void backward() override {
    const int64_t c = y.shape().back(), rows = y.numel() / std::max<int64_t>(c, 1);
    const MaskRows where(y.shape(), mask.shape());
    Tensor dx = Tensor::empty(y.shape());
    const real* py = y.data();
    const real* pg = dy().data();
    const real* pm = mask.data();
    real* pd = dx.data();
    kernels::parallel_for(rows, c * 4, [&](int64_t r) {
      real* dr = pd + r * c;
      const real* mr = pm + where.offset(r);
      kernels::softmax_backward_row(py + r * c, pg + r * c, dr, c);
      for (int64_t j = 0; j < c; ++j)
        if (mr[j] != 0) dr[j] = 0;
    });
    accumulate(0, dx);
  }

  const char* name() const override { return "masked_softmax"; }
};

Var masked_softmax(const Var& x, const Tensor& mask) {
  auto op = std::make_unique<MaskedSoftmaxOp>();
  Tensor y = op->forward(x.value(), mask);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
