// StackOp: joins equally shaped tensors along a new axis (PyTorch's torch.stack).
#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/slabs.h"

namespace attn {

struct StackOp final : Op {
  int64_t outer = 1, inner = 1;  // each x viewed as (outer, inner), split where the axis goes

  // k tensors x_i (d_0..d_{r-1}) -> y (d_0..d_{axis-1}, k, d_axis..d_{r-1});
  // y[o, i, :] = x_i[o, :]. axis is 0..r, or negative counting from the end of y.
  Tensor forward(const std::vector<const Tensor*>& xs, int requested_axis) {
    if (xs.empty()) throw Error("stack: needs at least one tensor, got none");
    const Shape& first = xs[0]->shape();
    const int r = static_cast<int>(first.size());
    if (requested_axis < -(r + 1) || requested_axis > r)
      throw Error(fmt::format(
          "stack: axis {} is out of range for stacking tensors of shape {} (valid: {}..{})",
          requested_axis, shape_str(first), -(r + 1), r));
    const int axis = requested_axis < 0 ? requested_axis + r + 1 : requested_axis;
    std::vector<const real*> parts;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (xs[i]->shape() != first)
        throw Error(fmt::format(
            "stack: tensor {} has shape {} but tensor 0 has shape {}; stack needs equal shapes", i,
            shape_str(xs[i]->shape()), shape_str(first)));
      parts.push_back(xs[i]->data());
    }
    outer = inner = 1;
    for (int d = 0; d < axis; ++d) outer *= first[d];
    for (size_t d = axis; d < first.size(); ++d) inner *= first[d];
    Shape y_shape = first;
    y_shape.insert(y_shape.begin() + axis, static_cast<int64_t>(xs.size()));
    check_shape(y_shape, "stack");
    Tensor y = Tensor::empty(y_shape);
    kernels::join_slabs(parts, std::vector<int64_t>(xs.size(), inner), outer, y.data());
    return y;
  }

  // Every output element copies one input element: dx_i[o, :] = dy[o, i, :].
  void backward() override {
    const int64_t k = static_cast<int64_t>(inputs.size());
    for (int64_t i = 0; i < k; ++i) {
      if (!needs_grad(i)) continue;
      Tensor dx = Tensor::empty(inputs[i].shape());
      kernels::take_slab(dy().data(), outer, k * inner, i * inner, inner, dx.data());
      accumulate(i, dx);
    }
  }

  const char* name() const override { return "stack"; }
};

Var stack(const std::vector<Var>& xs, int axis) {
  auto op = std::make_unique<StackOp>();
  std::vector<const Tensor*> values;
  for (const Var& x : xs) values.push_back(&x.value());
  Tensor y = op->forward(values, axis);
  return record(std::move(op), xs, std::move(y));
}

}  // namespace attn
