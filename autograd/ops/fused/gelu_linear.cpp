// GeluLinearOp: y = GELU(x) W^T + b in one op, a GELU feed-forward block's second layer.
//
// Replaces (reference path, autograd/mode.h): gelu -> matmul -> add.
// One pass writes GELU(x) and its derivative s; the backward's input gradient (dy W) * s is
// scaled in the product's store (kernels/panel_gemm.h) instead of a GELU backward pass (which
// reads x, GELU(x) and the gradient and writes another tensor the size of x: four 8 MB tensors
// per layer at W4's shape).
// Measured: no step change visible in the cumulative A/B (W4 0.94 before and after,
// docs/performance.md, "`gelu_linear(x, W, b)`"), so its case rests on the memory traffic above;
// the same table's next line (the bias sums in the same product) took W4 to 0.92.
// Proven equal to gelu -> matmul -> add by tests/nn/reference_mode_test.cpp (the GELU
// feed-forward and decoder rows) and checked on its own by its op registry rows.
// With dropout (fused_dropout.h) it also replaces the dropout op between the GELU and the product
// (gelu -> dropout -> linear): a = GELU(x) o M and s = GELU'(x) o M in the same pass, so the
// backward is unchanged and no mask is kept or regenerated. That saves the dropout op's two passes
// over the (B,T,d_ff) hidden tensor and keeps the GELU fused (docs/performance.md, "Dropout inside
// the fused ops"); tests/nn/fused_dropout_test.cpp proves it equal to gelu -> dropout -> linear.
#include <optional>

#include "autograd/functional.h"
#include "autograd/kernels/dropout_mask.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"
#include "autograd/ops/fused/fused_dropout.h"
#include "autograd/ops/linear_products.h"

namespace attn {

struct GeluLinearOp final : LinearProducts {
  Tensor slope;  // GELU'(x) (o M with dropout), the derivative of the product's input
  GeluApprox approx = GeluApprox::kNone;
  std::optional<kernels::DropoutMask> drop;  // dropout of GELU(x), if any

  // x (..., in), w (out, in), b (out) or none -> y (..., out);  y = a W^T + b with
  // a = GELU(x), or GELU(x) o M with dropout (M: 0, or 1/(1-p) where kept).
  Tensor forward(const Tensor& x, const Tensor& w_in, const Tensor* b, GeluApprox form) {
    approx = form;
    return product("gelu_linear", x, gelu_with_slope(x), w_in, b, /*relu=*/false);
  }

  // dx = (dy W) o s with s = GELU'(x) (o M) (the scale in the product's store),
  // dW = dy^T a, db = sum over rows of dy.
  void backward() override { backward_products(dy(), slope.data()); }

  // GELU(x) (returned) and its derivative (kept in slope), one pass over x; both times the mask
  // with dropout (element i's word: i, its flat index, as dropout(gelu(x)) draws it).
  Tensor gelu_with_slope(const Tensor& x) {
    Tensor activated = Tensor::empty(x.shape());
    slope = Tensor::empty(x.shape());
    const real* px = x.data();
    real *pa = activated.data(), *ps = slope.data();
    const bool tanh_form = approx == GeluApprox::kTanh;
    kernels::parallel_chunks(x.numel(), 12, [&](int64_t begin, int64_t n) {
      kernels::gelu_with_slope_n(px + begin, pa + begin, ps + begin, n, tanh_form);
      if (drop) drop->apply_to_both(begin, n, pa + begin, ps + begin);
    });
    return activated;
  }

  const char* name() const override { return "gelu_linear"; }
};

Var gelu_linear(const Var& x,
                const Var& weight,
                const std::optional<Var>& bias,
                GeluApprox approx) {
  return gelu_linear(x, weight, bias, approx, FusedDropout{});
}

Var gelu_linear(const Var& x,
                const Var& weight,
                const std::optional<Var>& bias,
                GeluApprox approx,
                const FusedDropout& dropout) {
  check_fused_dropout("gelu_linear", dropout);
  auto op = std::make_unique<GeluLinearOp>();
  // One draw, where dropout(gelu(x), p, gen) would make it: the same mask as the reference path.
  if (dropout.p > 0) op->drop = kernels::DropoutMask::make(dropout.gen->next_u64(), dropout.p);
  Tensor y = op->forward(x.value(), weight.value(), bias ? &bias->value() : nullptr, approx);
  return record_linear(std::move(op), x, weight, bias, std::move(y));
}

}  // namespace attn
