// LinearOp: y = x W^T + b, PyTorch's F.linear, the bias inside the product.
// The reference path writes the same layer as matmul then add (nn/linear.cpp in reference mode,
// autograd/mode.h). matmul followed by add makes a pass to zero y (BLAS, for beta = 0), the GEMM,
// then a second pass that reads y and writes y + b into a new tensor; here the product's
// register blocks start from the bias (ops/linear_products.h): y is written once, and backward
// takes the bias gradient from the input gradient's product instead of a pass of its own.
// Measured: W1's train step 0.85 -> 0.83, W4's 0.93 -> 0.90 of the time before that round
// (docs/performance.md, "`linear` op (F.linear)").
#include "autograd/functional.h"
#include "autograd/ops/linear_products.h"

namespace attn {

struct LinearOp final : LinearProducts {
  // x (..., in), w (out, in), b (out) or none -> y (..., out);  y = x W^T + b.
  Tensor forward(const Tensor& x, const Tensor& w_in, const Tensor* b) {
    return product("linear", x, x, w_in, b, /*relu=*/false);
  }

  // dx (rows,in) = dy W;  dW (out,in) = dy^T x;  db (out) = sum over rows of dy.
  void backward() override { backward_products(dy()); }

  const char* name() const override { return "linear"; }
};

Var linear(const Var& x, const Var& weight, const std::optional<Var>& bias) {
  auto op = std::make_unique<LinearOp>();
  Tensor y = op->forward(x.value(), weight.value(), bias ? &bias->value() : nullptr);
  return record_linear(std::move(op), x, weight, bias, std::move(y));
}

}  // namespace attn
