// TransposeOp: swaps the last two axes, as an explicit copy (tensors have no strides).
#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

namespace {

// x viewed as (batch, m, n) -> y (batch, n, m): y[b, j, i] = x[b, i, j].
Tensor swap_last_two(const Tensor& x) {
  Shape out = x.shape();
  const int r = x.rank();
  std::swap(out[r - 1], out[r - 2]);
  const int64_t m = x.shape()[r - 2], n = x.shape()[r - 1];
  const int64_t batch = m * n == 0 ? 0 : x.numel() / (m * n);
  Tensor y = Tensor::empty(out);
  const real* px = x.data();
  real* py = y.data();
  kernels::parallel_for(batch * m, n, [&](int64_t bi) {
    const int64_t b = bi / m, i = bi % m;
    const real* xr = px + bi * n;
    real* yb = py + b * m * n;
    for (int64_t j = 0; j < n; ++j) yb[j * m + i] = xr[j];
  });
  return y;
}

}  // namespace

struct TransposeOp final : Op {
  // x (...,M,N) -> y (...,N,M);  y[..., j, i] = x[..., i, j]
  Tensor forward(const Tensor& x) {
    if (x.rank() < 2)
      throw Error(
          fmt::format("transpose: needs rank >= 2 (it swaps the last two axes), got shape {}",
                      shape_str(x.shape())));
    return swap_last_two(x);
  }

  // A transpose is a permutation of positions; its adjoint is the inverse permutation, which is
  // the transpose again: dx = dy^T over the last two axes.
  void backward() override { accumulate(0, swap_last_two(dy())); }

  const char* name() const override { return "transpose"; }
};

Var transpose(const Var& x) {
  auto op = std::make_unique<TransposeOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
