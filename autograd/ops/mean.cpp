// MeanOp: the mean of all elements, or over one axis.
#include "autograd/functional.h"
#include "autograd/kernels/reduce.h"
#include "autograd/kernels/unary.h"

namespace attn {

struct MeanOp final : Op {
  Shape x_shape;
  kernels::AxisSplit split;  // outer x axis x inner view of x around the reduced axis
  bool all = false;
  real inv_n = 0;  // 1 / (number of elements averaged into each output)

  // x (...) -> y ():  y = (1/N) sum_i x_i.   Over an axis of extent n:
  // y[o, i] = (1/n) sum_k x[o, k, i].  (An empty reduction gives nan, 0/0, as in PyTorch.)
  Tensor forward(const Tensor& x, int axis, bool keepdim, bool over_all) {
    x_shape = x.shape();
    all = over_all;
    if (all) {
      inv_n = real(1) / real(x.numel());
      return Tensor::scalar(static_cast<real>(kernels::sum_all(x) / double(x.numel())));
    }
    split = kernels::AxisSplit(x_shape, axis, "mean");
    inv_n = real(1) / real(split.n);
    const real scale = inv_n;
    return kernels::map(kernels::sum_axis(x, split, keepdim),
                        [scale](real v) { return v * scale; });
  }

  // dy/dx_i = 1/N: every element receives the upstream gradient of its mean, divided by the
  // number of elements that mean averaged.
  void backward() override {
    if (all) {
      accumulate(0, Tensor::full(x_shape, dy().item() * inv_n));
      return;
    }
    accumulate(0, kernels::expand_axis(dy(), split, x_shape, inv_n));
  }

  const char* name() const override { return "mean"; }
};

Var mean(const Var& x) {
  auto op = std::make_unique<MeanOp>();
  Tensor y = op->forward(x.value(), 0, false, true);
  return record(std::move(op), {x}, std::move(y));
}

Var mean(const Var& x, int axis, bool keepdim) {
  auto op = std::make_unique<MeanOp>();
  Tensor y = op->forward(x.value(), axis, keepdim, false);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
