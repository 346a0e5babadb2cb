// HeadSliceOp: the columns [start, end) of x (B,T,C) split into H heads, as (B,H,T,D): one copy.
//
// Multi-head attention projects q, k and v with one GEMM into (B,T,3E) and then needs each as
// (B,H,T,D). As slice + reshape + permute that is two copies forward and two backward per
// operand; this op moves each value once. Backward puts dy back into its columns of x's
// gradient, in place when that gradient already exists (the second and third of q, k, v).
#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

namespace {

// For every (b, t, h): the D values at column start + h D of row (b, t) of x (row length c) and
// the row (b, h, t) of the (B,H,T,D) tensor. fn(x_offset, y_offset) per such run; before a row's
// runs, row_fn(x offset of the row), if given.
struct NoRowFn {
  void operator()(int64_t) const {}
};
template <class Fn, class RowFn = NoRowFn>
void for_each_head_row(int64_t b,
                       int64_t t,
                       int64_t c,
                       int64_t h,
                       int64_t d,
                       int64_t start,
                       Fn&& fn,
                       RowFn&& row_fn = {}) {
  kernels::parallel_for(b * t, h * d, [&](int64_t bt) {
    const int64_t bi = bt / t, ti = bt % t;
    row_fn(bt * c);
    for (int64_t hi = 0; hi < h; ++hi) fn(bt * c + start + hi * d, ((bi * h + hi) * t + ti) * d);
  });
}

}  // namespace

struct HeadSliceOp final : Op {
  int64_t b = 0, t = 0, c = 0, h = 0, d = 0, start = 0;

  // x (B,T,C) -> y (B,H,T,D), D = (end - start) / H:
  //   y[b,h,t,:] = x[b,t,start + h D : start + (h+1) D]
  // (PyTorch: x[..., start:end].unflatten(-1, (H, D)).transpose(1, 2)).
  Tensor forward(const Tensor& x, int64_t heads, int64_t s, int64_t e) {
    if (x.rank() != 3 || heads <= 0 || s < 0 || e > x.size(2) || s > e || (e - s) % heads != 0)
      throw Error(fmt::format(
          "head_slice: expected x (B,T,C) and 0 <= start <= end <= C with end - start a multiple "
          "of heads; got x {}, columns [{}, {}), heads {}",
          shape_str(x.shape()), s, e, heads));
    b = x.size(0), t = x.size(1), c = x.size(2), h = heads, d = (e - s) / heads, start = s;
    Tensor y = Tensor::empty({b, h, t, d});
    const real* px = x.data();
    real* py = y.data();
    for_each_head_row(b, t, c, h, d, start,
                      [&](int64_t xo, int64_t yo) { copy_run(px + xo, py + yo); });
    return y;
  }

  // dx is dy moved back into columns [start, start + H D), 0 elsewhere; added in place when x
  // already has a gradient of its own.
  void backward() override {
    if (!needs_grad(0)) return;
    Node& x = inputs[0].node();
    const real* pg = dy().data();
    if (x.has_grad) {
      real* pd = x.own_grad().data();
      for_each_head_row(b, t, c, h, d, start, [&](int64_t xo, int64_t yo) {
        for (int64_t j = 0; j < d; ++j) pd[xo + j] += pg[yo + j];
      });
      return;
    }
    // The first gradient x receives: each row's other columns are zeroed as the row is written
    // (one pass, not a zero-fill of the whole tensor followed by the copy).
    Tensor dx = Tensor::empty({b, t, c});
    real* pd = dx.data();
    const int64_t end = start + h * d;
    for_each_head_row(
        b, t, c, h, d, start, [&](int64_t xo, int64_t yo) { copy_run(pg + yo, pd + xo); },
        [&](int64_t row) {
          std::fill(pd + row, pd + row + start, real(0));
          std::fill(pd + row + end, pd + row + c, real(0));
        });
    accumulate(0, dx);
  }

  // One head's d values. An inline loop: d is often 16-64, where a memmove call per run costs
  // more than the copy.
  void copy_run(const real* from, real* to) const {
#pragma omp simd
    for (int64_t j = 0; j < d; ++j) to[j] = from[j];
  }

  const char* name() const override {
    return "head_slice";
  }
};

Var head_slice(const Var& x, int64_t heads, int64_t start, int64_t end) {
  auto op = std::make_unique<HeadSliceOp>();
  Tensor y = op->forward(x.value(), heads, start, end);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
