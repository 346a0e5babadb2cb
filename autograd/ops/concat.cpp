// ConcatOp: joins tensors along an existing axis (PyTorch's torch.cat).
#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/slabs.h"

namespace attn {

struct ConcatOp final : Op {
  int64_t outer = 1;            // product of the extents before the axis
  std::vector<int64_t> widths;  // per input: n_i * inner, its block in each outer row of y

  // x_i (..., n_i, ...) -> y (..., sum_i n_i, ...);  y[o, off_i + k, :] = x_i[o, k, :] with
  // off_i = n_0 + ... + n_{i-1}. All inputs share the rank and every extent but the axis one.
  Tensor forward(const std::vector<const Tensor*>& xs, int requested_axis) {
    if (xs.empty()) throw Error("concat: needs at least one tensor, got none");
    const Shape& first = xs[0]->shape();
    if (first.empty()) throw Error("concat: scalars have no axis to join along; use stack");
    const int axis = norm_axis(requested_axis, static_cast<int>(first.size()), "concat");
    Shape y_shape = first;
    y_shape[axis] = 0;
    outer = 1;
    for (int d = 0; d < axis; ++d) outer *= first[d];
    std::vector<const real*> parts;
    for (size_t i = 0; i < xs.size(); ++i) {
      const Shape& s = xs[i]->shape();
      bool same = s.size() == first.size();
      for (size_t d = 0; same && d < s.size(); ++d) same = d == size_t(axis) || s[d] == first[d];
      if (!same)
        throw Error(fmt::format(
            "concat: tensor {} has shape {} but tensor 0 has shape {}; along axis {} all other "
            "extents (and the rank) must match",
            i, shape_str(s), shape_str(first), axis));
      y_shape[axis] += s[axis];
      widths.push_back(outer == 0 ? 0 : xs[i]->numel() / outer);
      parts.push_back(xs[i]->data());
    }
    Tensor y = Tensor::empty(y_shape);
    kernels::join_slabs(parts, widths, outer, y.data());
    return y;
  }

  // Each output element is a copy of exactly one input element, so dx_i is the block of dy
  // that x_i filled: dx_i[o, k, :] = dy[o, off_i + k, :].
  void backward() override {
    const int64_t row = dy().numel() / std::max<int64_t>(outer, 1);
    int64_t offset = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (needs_grad(i)) {
        Tensor dx = Tensor::empty(inputs[i].shape());
        kernels::take_slab(dy().data(), outer, row, offset, widths[i], dx.data());
        accumulate(i, dx);
      }
      offset += widths[i];
    }
  }

  const char* name() const override { return "concat"; }
};

Var concat(const std::vector<Var>& xs, int axis) {
  auto op = std::make_unique<ConcatOp>();
  std::vector<const Tensor*> values;
  for (const Var& x : xs) values.push_back(&x.value());
  Tensor y = op->forward(values, axis);
  return record(std::move(op), xs, std::move(y));
}

}  // namespace attn
