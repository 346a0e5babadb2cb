// ReshapeOp: the same elements under a new shape (no copy).
#include "autograd/functional.h"

namespace attn {

struct ReshapeOp final : Op {
  Shape x_shape;

  // x (...) -> y (shape), numel unchanged; one extent of `shape` may be -1 (inferred).
  // y shares x's storage: element k of y is element k of x in row-major order.
  Tensor forward(const Tensor& x, const Shape& shape) {
    x_shape = x.shape();
    return x.reshape(shape);
  }

  // Reshaping only relabels positions, so dx is dy read back in x's shape.
  void backward() override { accumulate(0, dy().reshape(x_shape)); }

  const char* name() const override { return "reshape"; }
};

Var reshape(const Var& x, const Shape& shape) {
  auto op = std::make_unique<ReshapeOp>();
  Tensor y = op->forward(x.value(), shape);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
