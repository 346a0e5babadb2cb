// LinearReluOp: y = relu(x W^T + b) in one op, a feed-forward block's first layer.
//
// Replaces (reference path, autograd/mode.h): matmul -> add -> relu.
// The ReLU is applied by the product's kernel before its store (kernels/panel_gemm.h), and the
// backward's mask dy * [y > 0] and the bias gradient's column sums are one pass: against linear
// then relu, a (rows,out) tensor and two passes over it fewer, forward and backward.
// Measured: W1's train step 0.94 -> 0.925 of the time before that round (cumulative A/B,
// docs/performance.md, "`linear_relu(x, w, b)`"); W4 has no ReLU.
// Proven equal to matmul -> add -> relu by tests/nn/reference_mode_test.cpp (the feed-forward
// and transformer rows) and checked on its own by its op registry row (gradcheck, PyTorch).
#include <algorithm>

#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"
#include "autograd/kernels/parallel.h"
#include "autograd/ops/linear_products.h"

namespace attn {

struct LinearReluOp final : LinearProducts {
  Tensor y;  // the output, whose sign is the derivative's mask

  // x (..., in), w (out, in), b (out) or none -> y (..., out);  y = max(x W^T + b, 0).
  Tensor forward(const Tensor& x, const Tensor& w_in, const Tensor* b) {
    y = product("linear_relu", x, x, w_in, b, /*relu=*/true);
    return y;
  }

  // g = dy * [y > 0] (PyTorch's relu derivative: 0 at the kink), then as linear:
  // dx = g W, dW = g^T x, db = sum over rows of g (made in the masking pass).
  void backward() override {
    Tensor db;
    const Tensor g = masked_dy(db);
    backward_products(g, nullptr, has_bias && needs_grad(2) ? &db : nullptr);
  }

  // dy * [y > 0] and, with a bias, its column sums db, in one pass: blocks of kRowBlock rows
  // each sum their own partial db, and sum_to_shape adds the partials in block order (the same
  // sums whatever the thread count).
  Tensor masked_dy(Tensor& db) {
    constexpr int64_t kRowBlock = 32;
    const bool sums = has_bias && needs_grad(2);
    const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
    Tensor masked = Tensor::empty(y.shape());
    Tensor partial = sums ? Tensor::zeros({blocks, out}) : Tensor();
    const real *pg = dy().data(), *py = y.data();
    real* pm = masked.data();
    kernels::parallel_for(blocks, kRowBlock * out * 3, [&](int64_t blk) {
      real* part = sums ? partial.data() + blk * out : nullptr;
      for (int64_t r = blk * kRowBlock; r < std::min(rows, (blk + 1) * kRowBlock); ++r) {
        const real *gr = pg + r * out, *yr = py + r * out;
        real* mr = pm + r * out;
#pragma omp simd
        for (int64_t j = 0; j < out; ++j) mr[j] = yr[j] > 0 ? gr[j] : real(0);
        if (sums) {
#pragma omp simd
          for (int64_t j = 0; j < out; ++j) part[j] += mr[j];
        }
      }
    });
    if (sums) db = kernels::sum_to_shape(partial, {out});
    return masked;
  }

  const char* name() const override {
    return "linear_relu";
  }
};

Var linear_relu(const Var& x, const Var& weight, const std::optional<Var>& bias) {
  auto op = std::make_unique<LinearReluOp>();
  Tensor y = op->forward(x.value(), weight.value(), bias ? &bias->value() : nullptr);
  return record_linear(std::move(op), x, weight, bias, std::move(y));
}

}  // namespace attn
