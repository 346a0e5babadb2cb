// MaskedFillOp: y = mask ? value : x, the mask broadcast to x's shape (x.masked_fill(mask, v)).
#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"

namespace attn {

struct MaskedFillOp final : Op {
  Tensor mask;  // saved: filled positions receive no gradient

  // x (...), mask (...) of 0/1 broadcastable to x -> y (x's shape);
  // y = value where mask != 0, x elsewhere. Attention uses it with value = -inf or -1e9.
  Tensor forward(const Tensor& x, const Tensor& m, real value) {
    if (broadcast_shapes(m.shape(), x.shape(), "masked_fill") != x.shape())
      throw Error(fmt::format("masked_fill: mask {} must broadcast to x {} without growing it",
                              shape_str(m.shape()), shape_str(x.shape())));
    mask = m;
    return kernels::broadcast_binary(x, m, "masked_fill",
                                     [value](real xi, real mi) { return mi != 0 ? value : xi; });
  }

  // dy/dx = 0 where filled (a constant), 1 elsewhere:  dx = dy * (1 - mask).
  void backward() override {
    accumulate(0, kernels::broadcast_binary(dy(), mask, "masked_fill",
                                            [](real g, real mi) { return mi != 0 ? 0 : g; }));
  }

  const char* name() const override { return "masked_fill"; }
};

Var masked_fill(const Var& x, const Tensor& mask, real value) {
  auto op = std::make_unique<MaskedFillOp>();
  Tensor y = op->forward(x.value(), mask, value);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
