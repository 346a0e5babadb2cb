// RopeOp: rotary position embedding, y = R(theta_t) x_t pair by pair (a fused kernel).
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct RopeOp final : Op {
  int64_t t_len = 0, d = 0, start = 0;
  RopeStyle style = RopeStyle::kRotateHalf;
  std::vector<real> cos_t, sin_t;  // (T, D/2) angle tables, shared by forward and backward

  // Column indices of pair i: (i, i+D/2) rotate-half, (2i, 2i+1) interleaved.
  int64_t first(int64_t i) const { return style == RopeStyle::kRotateHalf ? i : 2 * i; }
  int64_t second(int64_t i) const {
    return style == RopeStyle::kRotateHalf ? i + d / 2 : 2 * i + 1;
  }

  // Rotates every pair of every row by +theta (sign = 1) or -theta (sign = -1):
  //   (a, b) -> (a cos - sign b sin, b cos + sign a sin).
  Tensor rotate(const Tensor& x, real sign) const {
    Tensor y = Tensor::empty(x.shape());
    const int64_t rows = x.numel() / d, half = d / 2;
    const real* px = x.data();
    real* py = y.data();
    kernels::parallel_for(rows, d * 3, [&](int64_t r) {
      const real* c = cos_t.data() + (r % t_len) * half;
      const real* s = sin_t.data() + (r % t_len) * half;
      const real* xr = px + r * d;
      real* yr = py + r * d;
      for (int64_t i = 0; i < half; ++i) {
        const real a = xr[first(i)], b = xr[second(i)];
        yr[first(i)] = a * c[i] - sign * b * s[i];
        yr[second(i)] = b * c[i] + sign * a * s[i];
      }
    });
    return y;
  }

  // x (...,T,D) -> y (...,T,D).  For the row at position p = start + t and pair i,
  //   theta = p * base^(-2i/D),  (y_a, y_b) = (x_a cos theta - x_b sin theta,
  //                                            x_b cos theta + x_a sin theta).
  // A rotation keeps every pair's length, and <R(p) q, R(p') k> depends on p - p' only.
  Tensor forward(const Tensor& x, int64_t start_pos, RopeStyle s, double base) {
    if (x.rank() < 2 || x.shape().back() % 2 != 0)
      throw Error(
          fmt::format("rope: expected x (...,T,D) with D even, got {}", shape_str(x.shape())));
    if (start_pos < 0) throw Error(fmt::format("rope: start_pos must be >= 0, got {}", start_pos));
    t_len = x.size(-2), d = x.shape().back(), start = start_pos, style = s;
    const int64_t half = d / 2;
    cos_t.resize(static_cast<size_t>(t_len * half));
    sin_t.resize(cos_t.size());
    for (int64_t t = 0; t < t_len; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double theta =
            static_cast<double>(start + t) * std::pow(base, -2.0 * static_cast<double>(i) / d);
        cos_t[t * half + i] = static_cast<real>(std::cos(theta));
        sin_t[t * half + i] = static_cast<real>(std::sin(theta));
      }
    return rotate(x, 1);
  }

  // y = R x with R orthogonal, so dx = R^T dy = R(-theta) dy: the same kernel, angle negated.
  void backward() override { accumulate(0, rotate(dy(), -1)); }

  const char* name() const override { return "rope"; }
};

Var rope(const Var& x, int64_t start_pos, RopeStyle style, double base) {
  auto op = std::make_unique<RopeOp>();
  Tensor y = op->forward(x.value(), start_pos, style, base);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
