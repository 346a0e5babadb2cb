// SliceOp: the index range [start, end) of one axis, as a copy (x[..., a:b, ...], x.narrow).
#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/slabs.h"

namespace attn {

struct SliceOp final : Op {
  int64_t outer = 1, inner = 1;  // x viewed as (outer, n, inner) around the axis
  int64_t n = 0, start = 0, len = 0;

  // x (..., n, ...) -> y (..., end - start, ...);  y[o, k, :] = x[o, start + k, :].
  // Negative start/end count from the end of the axis, as in Python; after that
  // 0 <= start <= end <= n is required (no silent clamping: an off-by-one should be loud).
  Tensor forward(const Tensor& x, int requested_axis, int64_t s, int64_t e) {
    if (x.rank() == 0) throw Error("slice: needs rank >= 1, got a scalar");
    const int axis = norm_axis(requested_axis, x.rank(), "slice");
    n = x.shape()[axis];
    const int64_t b = s < 0 ? s + n : s, f = e < 0 ? e + n : e;
    if (b < 0 || f > n || b > f)
      throw Error(
          fmt::format("slice: range [{}, {}) is out of bounds for axis {} of extent {} (x {}); "
                      "need 0 <= start <= end <= {}",
                      s, e, axis, n, shape_str(x.shape()), n));
    start = b, len = f - b;
    outer = inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
    Shape y_shape = x.shape();
    y_shape[axis] = len;
    Tensor y = Tensor::empty(y_shape);
    kernels::take_slab(x.data(), outer, n * inner, start * inner, len * inner, y.data());
    return y;
  }

  // y copies one block of x, so dx is dy put back into that block and zero elsewhere.
  // When x already has a gradient (the q, k, v slices of one packed projection: the second
  // and third slice to run backward), dy is added into its block in place: no zeroed tensor of
  // x's full size and no full-size add for a block of it.
  void backward() override {
    if (!needs_grad(0)) return;
    Node& x = inputs[0].node();
    if (x.has_grad) {
      kernels::add_slab(dy().data(), outer, n * inner, start * inner, len * inner,
                        x.own_grad().data());
      return;
    }
    Tensor dx(inputs[0].shape());
    kernels::put_slab(dy().data(), outer, n * inner, start * inner, len * inner, dx.data());
    accumulate(0, dx);
  }

  const char* name() const override { return "slice"; }
};

Var slice(const Var& x, int axis, int64_t start, int64_t end) {
  auto op = std::make_unique<SliceOp>();
  Tensor y = op->forward(x.value(), axis, start, end);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
