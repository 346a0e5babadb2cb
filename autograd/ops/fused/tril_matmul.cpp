// TrilMatmulOp: y = tril(a, diagonal) b, computing only with the lower triangle of a.
//
// Causal attention's output is p v with p zero above the diagonal: a full GEMM spends half its
// multiply-adds on those zeros, forward and backward. Here row i of a counts only up to column
// i + diagonal (PyTorch's torch.tril(a, diagonal) @ b; what a holds above is never read and gets
// gradient 0), and every product carries a Triangle (kernels/blas.h) that skips the rest.
//
// Replaces (reference path, autograd/mode.h): matmul(a, b) where a is attention's causal weights
// (zero above the diagonal). Measured together with attention_weights (see there): W6's causal
// attention at T = 128 0.67 of the time, W4's train step 0.94 (docs/performance.md).
#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/causal_blocks.h"

namespace attn {

using kernels::Triangle;

struct TrilMatmulOp final : Op {
  Tensor a, b;  // inputs (shared storage, no copy)
  kernels::CausalRows tri;
  int64_t matrices = 1, group = 1, n = 0;  // group: a's matrices per b matrix (GQA)

  // a (...,H,M,K), b (...,Hkv,K,N) -> y (...,H,M,N), H a multiple of Hkv (a's head h reads b's
  // head h / (H/Hkv); H = Hkv is a plain batched product):
  //   y_i = sum_{j <= i + diagonal} a_ij b_j.
  Tensor forward(const Tensor& a_in, const Tensor& b_in, int64_t diagonal) {
    a = a_in, b = b_in;
    const Shape &as = a.shape(), &bs = b.shape();
    group = kernels::head_group(as, bs);
    if (group == 0 || as.back() != bs[bs.size() - 2])
      throw Error(
          fmt::format("tril_matmul: expected a (...,H,M,K) and b (...,Hkv,K,N) with the same "
                      "other leading axes and H a multiple of Hkv; got a {} b {}",
                      shape_str(as), shape_str(bs)));
    tri = {.rows = as[as.size() - 2], .cols = as.back(), .diagonal = diagonal};
    n = bs.back();
    const int64_t m = tri.rows, k = tri.cols;
    matrices = a.numel() / std::max<int64_t>(m * k, 1);
    Shape out = as;
    out.back() = n;
    Tensor y = Tensor::empty(out);
    kernels::parallel_triangles(matrices, m, m * k * n, [&](int64_t mat, int64_t r0, int64_t r1) {
      kernels::gemm({.m = r1 - r0,
                     .n = n,
                     .k = k,
                     .a = a.data() + (mat * m + r0) * k,
                     .lda = k,
                     .b = b.data() + mat / group * k * n,
                     .ldb = n,
                     .c = y.data() + (mat * m + r0) * n,
                     .ldc = n,
                     .triangle = tri.triangle(Triangle::Part::kLowerA, r0)});
    });
    return y;
  }

  // With L = tril(a):  da = tril(dy b^T) (0 above the diagonal),  db = L^T dy.
  void backward() override {
    const int64_t m = tri.rows, k = tri.cols;
    const Tensor& g = dy();
    if (needs_grad(0)) {
      Tensor da = Tensor::empty(a.shape());
      kernels::parallel_triangles(matrices, m, m * k * n, [&](int64_t mat, int64_t r0, int64_t r1) {
        real* dam = da.data() + mat * m * k;
        kernels::gemm({.trans_b = true,
                       .m = r1 - r0,
                       .n = k,
                       .k = n,
                       .a = g.data() + (mat * m + r0) * n,
                       .lda = n,
                       .b = b.data() + mat / group * k * n,
                       .ldb = n,
                       .c = dam + r0 * k,
                       .ldc = k,
                       .triangle = tri.triangle(Triangle::Part::kLowerC, r0)});
        for (int64_t i = r0; i < r1; ++i)  // the product left these unwritten or not needed
          std::fill(dam + i * k + tri.visible(i), dam + (i + 1) * k, real(0));
      });
      accumulate(0, da);
    }
    if (needs_grad(1)) {
      // db = tril(a)^T dy, summed over the heads of a that read each head of b.
      Tensor db = Tensor::empty(b.shape());
      kernels::grouped_tril_transposed_product(tri, matrices, group, 1, a.data(), g.data(), n,
                                               db.data());
      accumulate(1, db);
    }
  }

  const char* name() const override { return "tril_matmul"; }
};

Var tril_matmul(const Var& a, const Var& b, int64_t diagonal) {
  auto op = std::make_unique<TrilMatmulOp>();
  Tensor y = op->forward(a.value(), b.value(), diagonal);
  return record(std::move(op), {a, b}, std::move(y));
}

}  // namespace attn
