#include "autograd/ops/linear_products.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "autograd/error.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/broadcast.h"
#include "autograd/kernels/panel_gemm.h"
#include "autograd/kernels/parallel.h"

namespace attn {

Tensor LinearProducts::product(const char* op,
                               const Tensor& x,
                               const Tensor& a_in,
                               const Tensor& w_in,
                               const Tensor* b,
                               bool relu) {
  if (x.rank() < 1 || w_in.rank() != 2 || x.shape().back() != w_in.size(1) ||
      (b && b->shape() != Shape{w_in.size(0)}))
    throw Error(
        fmt::format("{}: expected x (..., in), weight (out, in), bias (out); got x {}, weight {}{}",
                    op, shape_str(x.shape()), shape_str(w_in.shape()),
                    b ? ", bias " + shape_str(b->shape()) : std::string()));
  a = a_in, w = w_in, has_bias = b != nullptr;
  out = w.size(0), in = w.size(1), rows = a.numel() / std::max<int64_t>(in, 1);
  Shape y_shape(a.shape().begin(), a.shape().end() - 1);
  y_shape.push_back(out);
  Tensor y = Tensor::empty(y_shape);
  kernels::panel_gemm({.rows = rows,
                       .k = in,
                       .n = out,
                       .a = a.data(),
                       .lda = in,
                       .b = w.data(),
                       .ldb = in,
                       .b_transposed = true,
                       .row_init = has_bias ? b->data() : nullptr,
                       .relu = relu,
                       .c = y.data(),
                       .ldc = out});
  return y;
}

void LinearProducts::backward_products(const Tensor& g,
                                       const real* dx_scale,
                                       const Tensor* db_ready) {
  // Without a ready bias gradient, dy's column sums come from the input gradient's GEMM, which
  // reads g's rows anyway.
  const bool sums_in_gemm = !db_ready && has_bias && needs_grad(2) && needs_grad(0);
  Tensor db = sums_in_gemm ? Tensor::empty({out}) : Tensor();
  // The buffers first (gradients and the tensor pool are this thread's business), then the
  // two products side by side, one per core (kernels::run_pair), then the bookkeeping.
  // The scaled store writes, never adds: with a scale, always a fresh dx.
  Tensor* dx_into = needs_grad(0) && !dx_scale ? existing_grad(0) : nullptr;
  Tensor* dw_into = needs_grad(1) ? existing_grad(1) : nullptr;
  Tensor dx = needs_grad(0) && !dx_into ? Tensor::empty(a.shape()) : Tensor();
  Tensor dw = needs_grad(1) && !dw_into ? Tensor::empty(w.shape()) : Tensor();
  const kernels::PanelGemm input_product{.rows = rows,
                                         .k = out,
                                         .n = in,
                                         .a = g.data(),
                                         .lda = out,
                                         .b = w.data(),
                                         .ldb = in,
                                         .accumulate = dx_into != nullptr,
                                         .scale = dx_scale,
                                         .ld_scale = in,
                                         .c = (dx_into ? *dx_into : dx).data(),
                                         .ldc = in,
                                         .col_sums = sums_in_gemm ? db.data() : nullptr};
  auto weight_gradient = [&] {
    if (!needs_grad(1)) return;
    kernels::gemm(true, false, out, in, rows, 1, g.data(), out, a.data(), in, real(dw_into ? 1 : 0),
                  (dw_into ? *dw_into : dw).data(), in);
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
    accumulate(2, db_ready ? *db_ready : sums_in_gemm ? db : kernels::sum_to_shape(g, {out}));
}

Var record_linear(std::unique_ptr<Op> op,
                  const Var& x,
                  const Var& weight,
                  const std::optional<Var>& bias,
                  Tensor y) {
  if (!bias) return record(std::move(op), {x, weight}, std::move(y));
  return record(std::move(op), {x, weight, *bias}, std::move(y));
}

}  // namespace attn
