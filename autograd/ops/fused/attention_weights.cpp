// AttentionWeightsOp: P = softmax(scale q k^T) over the keys each query sees (all of them, or with
// causal = true those up to its own position), the scores and the softmax fused per block of rows.
//
// Causal: sdpa used to build the full (Tq,Tk) scores, a (Tq,Tk) 0/1 mask and then a masked
// softmax, more work than without the mask. Here every product carries a Triangle
// (kernels/blas.h), so the GEMMs skip the hidden half (about half the multiply-adds), each row's
// softmax runs over the keys it sees, and the rest of the row is written as 0.
// Both: a block of rows is scored and normalised while it is in cache, forward and backward,
// instead of a matmul writing the whole (B,H,Tq,Tk) scores and a softmax pass reading them back.
//
// Replaces (reference path, autograd/mode.h): matmul(q, k^T) -> mul_scalar(scale) ->
// masked_fill (causal) -> softmax. Measured with tril_matmul, against the full scores, a 0/1 mask
// and masked_softmax: W6's causal attention at T = 128 0.67 of the time, W1's train step 0.98,
// W4's 0.94 (docs/performance.md, "causal attention skips its hidden half").
// Proven equal to the reference ops by tests/nn/reference_mode_test.cpp (every sdpa and causal
// row of the layer registry) and checked on its own by its op registry rows.
#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/causal_blocks.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

using kernels::Triangle;

struct AttentionWeightsOp final : Op {
  Tensor q, k, p;  // inputs (shared, no copy) and the output, which the derivative needs
  kernels::CausalRows tri;
  int64_t matrices = 1, group = 1, d = 0;  // group: query heads per key head (GQA)
  real scale = 1;

  // q (...,H,Tq,D), k (...,Hkv,Tk,D) -> p (...,H,Tq,Tk), Tq <= Tk, H a multiple of Hkv (query
  // head h reads key head h / (H/Hkv)); the queries are the last Tq positions:
  //   p_ij = exp(s_ij) / sum_{l <= i + Tk - Tq} exp(s_il) for j <= i + Tk - Tq, else 0,
  //   s = scale q k^T.
  // Without causal every query sees every key (and Tq > Tk is allowed).
  Tensor forward(const Tensor& q_in, const Tensor& k_in, real scale_in, bool causal) {
    q = q_in, k = k_in, scale = scale_in;
    const Shape &qs = q.shape(), &ks = k.shape();
    group = kernels::head_group(qs, ks);
    if (group == 0 || qs.back() != ks.back() || (causal && qs[qs.size() - 2] > ks[ks.size() - 2]))
      throw Error(fmt::format(
          "attention_weights: expected q (...,H,Tq,D) and k (...,Hkv,Tk,D) with the same other "
          "leading axes and D, H a multiple of Hkv{}; got q {} k {}",
          causal ? ", and Tq <= Tk (causal)" : "", shape_str(qs), shape_str(ks)));
    const int64_t tq = qs[qs.size() - 2], tk = ks[ks.size() - 2];
    d = qs.back();
    matrices = q.numel() / std::max<int64_t>(tq * d, 1);
    // Not causal: a diagonal past the last column, so every row sees every key.
    tri = {.rows = tq, .cols = tk, .diagonal = causal ? tk - tq : tk};
    Shape out = qs;
    out.back() = tk;
    p = Tensor::empty(out);
    kernels::parallel_triangles(
        matrices, tq, tq * tk * d, [&](int64_t mat, int64_t r0, int64_t r1) {
          real* pm = p.data() + mat * tq * tk;
          // Scores for rows [r0, r1), only as far right as each 4-row block needs.
          kernels::gemm({.trans_b = true,
                         .m = r1 - r0,
                         .n = tk,
                         .k = d,
                         .alpha = scale,
                         .a = q.data() + (mat * tq + r0) * d,
                         .lda = d,
                         .b = k.data() + mat / group * tk * d,
                         .ldb = d,
                         .c = pm + r0 * tk,
                         .ldc = tk,
                         .triangle = tri.triangle(Triangle::Part::kLowerC, r0)});
          kernels::softmax_visible_rows(tri, pm, r0, r1);
        });
    return p;
  }

  // On the visible part of each row, as softmax: ds_j = p_j (dp_j - sum_l dp_l p_l); then
  // dq = scale ds k and dk = scale ds^T q, both reading ds only on and below the diagonal.
  void backward() override {
    const int64_t tq = tri.rows, tk = tri.cols;
    Tensor ds = Tensor::empty(p.shape());  // written (and read) only where visible
    Tensor dq = needs_grad(0) ? Tensor::empty(q.shape()) : Tensor();
    kernels::parallel_triangles(
        matrices, tq, tq * tk * d, [&](int64_t mat, int64_t r0, int64_t r1) {
          real* dsm = ds.data() + mat * tq * tk;
          const int64_t off = mat * tq * tk;
          for (int64_t i = r0; i < r1; ++i)  // p is 0 past visible(i), so ds is too
            kernels::softmax_backward_row(p.data() + off + i * tk, dy().data() + off + i * tk,
                                          dsm + i * tk, tri.vector_width(i));
          if (!needs_grad(0)) return;
          kernels::gemm({.m = r1 - r0,
                         .n = d,
                         .k = tk,
                         .alpha = scale,
                         .a = dsm + r0 * tk,
                         .lda = tk,
                         .b = k.data() + mat / group * tk * d,
                         .ldb = d,
                         .c = dq.data() + (mat * tq + r0) * d,
                         .ldc = d,
                         .triangle = tri.triangle(Triangle::Part::kLowerA, r0)});
        });
    if (needs_grad(0)) accumulate(0, dq);
    if (!needs_grad(1)) return;
    // dk = scale ds^T q over the lower triangle, summed over the query heads of each key head.
    Tensor dk = Tensor::empty(k.shape());
    kernels::grouped_tril_transposed_product(tri, matrices, group, scale, ds.data(), q.data(), d,
                                             dk.data());
    accumulate(1, dk);
  }

  const char* name() const override { return "attention_weights"; }
};

Var attention_weights(const Var& q, const Var& k, real scale, bool causal) {
  auto op = std::make_unique<AttentionWeightsOp>();
  Tensor p = op->forward(q.value(), k.value(), scale, causal);
  return record(std::move(op), {q, k}, std::move(p));
}

}  // namespace attn
