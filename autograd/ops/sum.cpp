// SumOp: the sum of all elements, or over one axis.
#include "autograd/functional.h"
#include "autograd/kernels/reduce.h"

namespace attn {

struct SumOp final : Op {
  Shape x_shape;
  kernels::AxisSplit split;  // outer x axis x inner view of x around the reduced axis
  bool all = false;

  // x (...) -> y ():  y = sum_i x_i.   Over an axis: y[o, i] = sum_k x[o, k, i].
  Tensor forward(const Tensor& x, int axis, bool keepdim, bool over_all) {
    x_shape = x.shape();
    all = over_all;
    if (all) {
      double total = 0;  // accumulate in double: float sums of many terms drift
      for (int64_t i = 0; i < x.numel(); ++i) total += x[i];
      return Tensor::scalar(static_cast<real>(total));
    }
    split = kernels::AxisSplit(x_shape, axis, "sum");
    return kernels::sum_axis(x, split, keepdim);
  }

  // dy/dx_i = 1: every element receives the upstream gradient of the sum it fed.
  void backward() override {
    if (all) {
      accumulate(0, Tensor::full(x_shape, dy().item()));
      return;
    }
    accumulate(0, kernels::expand_axis(dy(), split, x_shape, 1));
  }

  const char* name() const override { return "sum"; }
};

Var sum(const Var& x) {
  auto op = std::make_unique<SumOp>();
  Tensor y = op->forward(x.value(), 0, false, true);
  return record(std::move(op), {x}, std::move(y));
}

Var sum(const Var& x, int axis, bool keepdim) {
  auto op = std::make_unique<SumOp>();
  Tensor y = op->forward(x.value(), axis, keepdim, false);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
