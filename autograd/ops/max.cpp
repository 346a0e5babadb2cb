// MaxOp: the largest element, or the largest along one axis; the gradient goes to the argmax.
#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/reduce.h"

namespace attn {

struct MaxOp final : Op {
  Shape x_shape;
  kernels::AxisSplit split;     // outer x axis x inner view of x around the reduced axis
  std::vector<int64_t> argmax;  // per output element: the winning k along the axis

  // x (...) -> y ():  y = max_i x_i.   Over an axis: y[o, i] = max_k x[o, k, i].
  // The maximum of all elements is the axis case on x viewed as one flat axis. Ties: the first
  // (smallest index) maximum wins; NaN propagates.
  Tensor forward(const Tensor& x, int axis, bool keepdim, bool over_all) {
    x_shape = x.shape();
    if (over_all && x.numel() == 0)
      throw Error("max: cannot take the maximum of an empty tensor of shape " + shape_str(x_shape));
    const Tensor view = over_all ? x.reshape({x.numel()}) : x;
    split = kernels::AxisSplit(view.shape(), over_all ? 0 : axis, "max");
    kernels::AxisMax m = kernels::max_axis(view, split, keepdim && !over_all, "max");
    argmax = std::move(m.argmax);
    return over_all ? m.values.reshape({}) : m.values;
  }

  // dy/dx[o, k, i] = 1 if k is the argmax of slice (o, i) else 0: the whole upstream gradient
  // goes to the one element that was selected (the first one, on ties — PyTorch's max(dim)
  // does the same; PyTorch's all-element max() instead splits it evenly among tied elements).
  void backward() override { accumulate(0, kernels::scatter_axis(dy(), argmax, split, x_shape)); }

  const char* name() const override { return "max"; }
};

Var max(const Var& x) {
  auto op = std::make_unique<MaxOp>();
  Tensor y = op->forward(x.value(), 0, false, true);
  return record(std::move(op), {x}, std::move(y));
}

Var max(const Var& x, int axis, bool keepdim) {
  auto op = std::make_unique<MaxOp>();
  Tensor y = op->forward(x.value(), axis, keepdim, false);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
