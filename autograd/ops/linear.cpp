// LinearOp: y = x W^T + b, PyTorch's F.linear, with the bias inside the product.
// matmul followed by add makes a pass to zero y (BLAS, for beta = 0), the GEMM, then a second
// pass that reads y and writes y + b into a new tensor. Here the product's register blocks start
// from the bias (kernels/panel_gemm.h): y is written once, and backward hands dy straight to the
// bias sum instead of copying it through add.
// With relu (linear_relu), y = max(x W^T + b, 0) is applied by the same kernel before its store,
// and the backward's mask dy * [y > 0] and the bias sum are one pass: against linear then relu,
// a tensor and two passes fewer.
// With a GELU on the input (gelu_linear, a feed-forward block's second layer), y = GELU(x) W^T + b:
// one pass writes GELU(x) and its derivative s, and the backward's input gradient
// (dy W) * s is scaled by the GEMM's store. Against gelu then linear, the GELU backward's pass
// (reading x, GELU(x) and the gradient, writing another 4 tensors the size of x) is gone.
#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/broadcast.h"
#include "autograd/kernels/panel_gemm.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

struct LinearOp final : Op {
  Tensor x, w;    // saved inputs (shared storage); with a GELU on the input, x is GELU(x)
  Tensor y_relu;  // with relu: the output, whose sign is the derivative's mask
  Tensor slope;   // with a GELU on the input: its derivative at the input
  bool has_bias = false, relu = false;
  std::optional<GeluApprox> gelu_in;
  int64_t rows = 0, in = 0, out = 0;

  // x (..., in), w (out, in), b (out) or none -> y (..., out);  y = x W^T + b.
  Tensor forward(const Tensor& x_in,
                 const Tensor& w_in,
                 const Tensor* b,
                 bool then_relu,
                 std::optional<GeluApprox> gelu_first = std::nullopt) {
    if (x_in.rank() < 1 || w_in.rank() != 2 || x_in.shape().back() != w_in.size(1) ||
        (b && b->shape() != Shape{w_in.size(0)}))
      throw Error(
          fmt::format("linear: expected x (..., in), weight (out, in), bias (out); got x "
                      "{}, weight {}{}",
                      shape_str(x_in.shape()), shape_str(w_in.shape()),
                      b ? ", bias " + shape_str(b->shape()) : std::string()));
    x = x_in, w = w_in, has_bias = b != nullptr, relu = then_relu, gelu_in = gelu_first;
    out = w.size(0), in = w.size(1), rows = x.numel() / std::max<int64_t>(in, 1);
    if (gelu_in) x = gelu_with_slope(x_in);
    Shape y_shape(x.shape().begin(), x.shape().end() - 1);
    y_shape.push_back(out);
    Tensor y = Tensor::empty(y_shape);
    kernels::panel_gemm({.rows = rows,
                         .k = in,
                         .n = out,
                         .a = x.data(),
                         .lda = in,
                         .b = w.data(),
                         .ldb = in,
                         .b_transposed = true,
                         .row_init = has_bias ? b->data() : nullptr,
                         .relu = relu,
                         .c = y.data(),
                         .ldc = out});
    if (relu) y_relu = y;
    return y;
  }

  // dx (rows,in) = dy (rows,out) W (out,in);  dW (out,in) = dy^T x;  db = sum over rows of dy.
  // When x (or W) already has a gradient - x feeds a residual add too, W is shared - the GEMM
  // adds into it directly (beta = 1) instead of writing a temporary that is added afterwards.
  void backward() override {
    Tensor db, masked;  // with relu: the bias gradient, made in the masking pass
    if (relu) masked = relu_masked_dy(db);
    const Tensor& g = relu ? masked : dy();
    // Without relu the bias gradient (dy's column sums) comes from the input gradient's GEMM,
    // which reads dy's rows anyway.
    const bool sums_in_gemm = !relu && has_bias && needs_grad(2) && needs_grad(0);
    if (sums_in_gemm) db = Tensor::empty({out});
    // The buffers first (gradients and the tensor pool are this thread's business), then the
    // two products side by side, one per core (kernels::run_pair), then the bookkeeping.
    // The scaled store writes, never adds: with a GELU, always a fresh dx.
    Tensor* dx_into = needs_grad(0) && !gelu_in ? existing_grad(0) : nullptr;
    Tensor* dw_into = needs_grad(1) ? existing_grad(1) : nullptr;
    Tensor dx = needs_grad(0) && !dx_into ? Tensor::empty(x.shape()) : Tensor();
    Tensor dw = needs_grad(1) && !dw_into ? Tensor::empty(w.shape()) : Tensor();
    const kernels::PanelGemm input_product{.rows = rows,
                                           .k = out,
                                           .n = in,
                                           .a = g.data(),
                                           .lda = out,
                                           .b = w.data(),
                                           .ldb = in,
                                           .accumulate = dx_into != nullptr,
                                           .scale = gelu_in ? slope.data() : nullptr,
                                           .ld_scale = in,
                                           .c = (dx_into ? *dx_into : dx).data(),
                                           .ldc = in,
                                           .col_sums = sums_in_gemm ? db.data() : nullptr};
    auto weight_gradient = [&] {
      if (!needs_grad(1)) return;
      kernels::gemm(true, false, out, in, rows, 1, g.data(), out, x.data(), in,
                    real(dw_into ? 1 : 0), (dw_into ? *dw_into : dw).data(), in);
    };
    const int64_t work = 2 * rows * in * out;
    if (needs_grad(0) && needs_grad(1) && kernels::runs_as_pair(work)) {
      // The two products have the same FLOPs but not quite the same speed (a GELU's scaled
      // store, OpenBLAS's packing): the core done first takes the input gradient's last chunks.
      kernels::SharedPanelGemm input_gradient(input_product);
      kernels::run_pair(
          work, [&] { input_gradient.run(); },
          [&] {
            weight_gradient();
            input_gradient.run();
          });
    } else {
      if (needs_grad(0)) kernels::panel_gemm(input_product);
      weight_gradient();
    }
    if (needs_grad(0) && !dx_into) accumulate(0, dx);
    if (needs_grad(1) && !dw_into) accumulate(1, dw);
    if (has_bias && needs_grad(2))
      accumulate(2, relu || sums_in_gemm ? db : kernels::sum_to_shape(g, {out}));
  }

  // dy * [y > 0] (PyTorch's relu derivative: 0 at the kink), and with a bias also its column
  // sums db, in one pass: blocks of kRowBlock rows each sum their own partial db, and
  // sum_to_shape adds the partials in block order (the same sums whatever the thread count).
  Tensor relu_masked_dy(Tensor& db) {
    constexpr int64_t kRowBlock = 32;
    const bool sums = has_bias && needs_grad(2);
    const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
    Tensor masked = Tensor::empty(y_relu.shape());
    Tensor partial = sums ? Tensor::zeros({blocks, out}) : Tensor();
    const real *pg = dy().data(), *py = y_relu.data();
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

  // GELU(x) (returned) and its derivative (kept in slope), one pass over x.
  Tensor gelu_with_slope(const Tensor& x_in) {
    Tensor activated = Tensor::empty(x_in.shape());
    slope = Tensor::empty(x_in.shape());
    const real* px = x_in.data();
    real *pa = activated.data(), *ps = slope.data();
    const bool tanh_form = *gelu_in == GeluApprox::kTanh;
    kernels::parallel_chunks(x_in.numel(), 12, [&](int64_t begin, int64_t n) {
      kernels::gelu_with_slope_n(px + begin, pa + begin, ps + begin, n, tanh_form);
    });
    return activated;
  }

  const char* name() const override {
    return gelu_in ? "gelu_linear" : "linear";
  }
};

namespace {

Var record_linear(const Var& x,
                  const Var& weight,
                  const std::optional<Var>& bias,
                  bool relu,
                  std::optional<GeluApprox> gelu_first = std::nullopt) {
  auto op = std::make_unique<LinearOp>();
  Tensor y =
      op->forward(x.value(), weight.value(), bias ? &bias->value() : nullptr, relu, gelu_first);
  if (!bias) return record(std::move(op), {x, weight}, std::move(y));
  return record(std::move(op), {x, weight, *bias}, std::move(y));
}

}  // namespace

Var linear(const Var& x, const Var& weight, const std::optional<Var>& bias) {
  return record_linear(x, weight, bias, false);
}

Var linear_relu(const Var& x, const Var& weight, const std::optional<Var>& bias) {
  return record_linear(x, weight, bias, true);
}

Var gelu_linear(const Var& x,
                const Var& weight,
                const std::optional<Var>& bias,
                GeluApprox approx) {
  return record_linear(x, weight, bias, false, approx);
}

}  // namespace attn
