// MatmulOp: y = op(a) @ op(b) through cblas gemm, for 2-D and batched (rank 3-4) operands.
#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"

namespace attn {

namespace {

// The GEMM plan for one call: how many independent products and their sizes.
struct MatmulPlan {
  int64_t batch = 1;  // number of (M,K)x(K,N) products
  int64_t m = 0, n = 0, k = 0;
  bool shared_b = false;  // b is rank 2 and reused by every batch entry
  Shape out_shape;
};

MatmulPlan plan_matmul(const Shape& a, const Shape& b, bool ta, bool tb) {
  auto fail = [&](const std::string& why) {
    return Error(fmt::format("matmul: {}: a {}{} vs b {}{}", why, shape_str(a), ta ? "^T" : "",
                             shape_str(b), tb ? "^T" : ""));
  };
  if (a.size() < 2 || b.size() < 2) throw fail("both operands need rank >= 2");
  MatmulPlan p;
  const size_t ra = a.size(), rb = b.size();
  p.m = ta ? a[ra - 1] : a[ra - 2];
  p.k = ta ? a[ra - 2] : a[ra - 1];
  const int64_t kb = tb ? b[rb - 1] : b[rb - 2];
  p.n = tb ? b[rb - 2] : b[rb - 1];
  if (p.k != kb) throw fail(fmt::format("inner dimensions differ ({} vs {})", p.k, kb));
  p.out_shape.assign(a.begin(), a.end() - 2);
  if (rb == 2) {
    p.shared_b = true;
  } else if (ra != rb || !std::equal(a.begin(), a.end() - 2, b.begin())) {
    throw fail("batch axes must match (or b must be rank 2)");
  }
  for (size_t i = 0; i + 2 < ra; ++i) p.batch *= a[i];
  p.out_shape.push_back(p.m);
  p.out_shape.push_back(p.n);
  return p;
}

// Runs gemm_i(i) for the `batch` independent products of one call. Several small products
// (attention's (T,T) x (T,d_head) per batch and head) are split across the threads, each GEMM
// single-threaded inside the parallel region (the OpenMP OpenBLAS does that by itself): OpenBLAS
// gains little from splitting one small GEMM, and every product writes its own output, so the
// result does not depend on the thread count. One product (batch 1) is cut by gemm() itself.
template <class GemmI>
void for_each_product(const MatmulPlan& p, GemmI&& gemm_i) {
  if (p.batch == 1) return gemm_i(0);
  kernels::parallel_for(p.batch, 2 * p.m * p.n * p.k, gemm_i);
}

}  // namespace

struct MatmulOp final : Op {
  Tensor a, b;  // saved operands (shared storage, no copy)
  bool ta = false, tb = false;
  real alpha = 1;
  MatmulPlan plan;

  // a (...,M,K), b (...,K,N) | (K,N) -> y (...,M,N);  y = alpha op(a) op(b), op = optional
  // transpose. alpha is the GEMM's own scale factor: scaling costs no extra pass.
  Tensor forward(const Tensor& a_in, const Tensor& b_in, bool trans_a, bool trans_b, real scale) {
    a = a_in, b = b_in, ta = trans_a, tb = trans_b, alpha = scale;
    plan = plan_matmul(a.shape(), b.shape(), ta, tb);
    Tensor y = Tensor::empty(plan.out_shape);
    const int64_t lda = a.shape().back(), ldb = b.shape().back();
    if (plan.shared_b && !ta) {
      // Fold every batch row of a into M: one large GEMM instead of `batch` small ones.
      kernels::gemm_split({.trans_b = tb,
                           .m = plan.batch * plan.m,
                           .n = plan.n,
                           .k = plan.k,
                           .alpha = alpha,
                           .a = a.data(),
                           .lda = lda,
                           .b = b.data(),
                           .ldb = ldb,
                           .c = y.data(),
                           .ldc = plan.n});
      return y;
    }
    const int64_t sa = plan.m * plan.k, sb = plan.shared_b ? 0 : plan.k * plan.n;
    for_each_product(plan, [&](int64_t i) {
      kernels::gemm(ta, tb, plan.m, plan.n, plan.k, alpha, a.data() + i * sa, lda,
                    b.data() + i * sb, ldb, 0, y.data() + i * plan.m * plan.n, plan.n);
    });
    return y;
  }

  // With A = op(a), B = op(b), Y = alpha A B:  dA = alpha dY B^T,  dB = alpha A^T dY.
  // Undoing op: if a was transposed, da = dA^T = B dY^T (likewise for b), so every case is one
  // GEMM with transposes chosen so nothing is ever copied.
  void backward() override {
    const Tensor& g = dy();
    const int64_t m = plan.m, n = plan.n, k = plan.k;
    const int64_t lda = a.shape().back(), ldb = b.shape().back();
    const int64_t sa = m * k, sb = plan.shared_b ? 0 : k * n, sy = m * n;
    if (needs_grad(0)) {
      Tensor da = Tensor::empty(a.shape());
      if (plan.shared_b && !ta) {
        // As in the forward, every batch row of a folds into M: one GEMM
        // da (batch*M, K) = dY (batch*M, N) B^T instead of `batch` thin ones.
        kernels::gemm_split({.trans_b = !tb,
                             .m = plan.batch * m,
                             .n = k,
                             .k = n,
                             .alpha = alpha,
                             .a = g.data(),
                             .lda = n,
                             .b = b.data(),
                             .ldb = ldb,
                             .c = da.data(),
                             .ldc = k});
      } else {
        for_each_product(plan, [&](int64_t i) {
          const real* gi = g.data() + i * sy;
          const real* bi = b.data() + i * sb;
          if (!ta)  // da (M,K) = dY (M,N) B^T (N,K)
            kernels::gemm(false, !tb, m, k, n, alpha, gi, n, bi, ldb, 0, da.data() + i * sa, k);
          else  // da (K,M) = B (K,N) dY^T (N,M)
            kernels::gemm(tb, true, k, m, n, alpha, bi, ldb, gi, n, 0, da.data() + i * sa, m);
        });
      }
      accumulate(0, da);
    }
    if (needs_grad(1)) {
      const real beta = plan.shared_b ? 1 : 0;  // a shared b sums over the batch
      // Only the summing loop below (beta 1) reads db before writing it.
      Tensor db = plan.shared_b && ta ? Tensor::zeros(b.shape()) : Tensor::empty(b.shape());
      const int64_t out_step = plan.shared_b ? 0 : k * n;
      if (plan.shared_b && !ta) {
        // One GEMM over all folded rows: dB (K,N) = A^T dY, or dB^T = dY^T A when tb.
        const int64_t rows = plan.batch * m;
        if (!tb)
          kernels::gemm(true, false, k, n, rows, alpha, a.data(), lda, g.data(), n, 0, db.data(),
                        n);
        else
          kernels::gemm(true, false, n, k, rows, alpha, g.data(), n, a.data(), lda, 0, db.data(),
                        k);
      } else {
        auto db_i = [&](int64_t i) {
          const real* ai = a.data() + i * sa;
          const real* gi = g.data() + i * sy;
          real* dbi = db.data() + i * out_step;
          if (!tb)  // db (K,N) = A^T (K,M) dY (M,N)
            kernels::gemm(!ta, false, k, n, m, alpha, ai, lda, gi, n, beta, dbi, n);
          else  // db (N,K) = dY^T (N,M) A (M,K)
            kernels::gemm(true, ta, n, k, m, alpha, gi, n, ai, lda, beta, dbi, k);
        };
        if (plan.shared_b) {  // every product adds into the one db: in order, one at a time
          for (int64_t i = 0; i < plan.batch; ++i) db_i(i);
        } else {
          for_each_product(plan, db_i);
        }
      }
      accumulate(1, db);
    }
  }

  const char* name() const override { return "matmul"; }
  // `batch` products of (M,K) x (K,N), 2 M N K each.
  double forward_flops() const override {
    return 2.0 * static_cast<double>(plan.batch) * static_cast<double>(plan.m) *
           static_cast<double>(plan.n) * static_cast<double>(plan.k);
  }
};

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b, real alpha) {
  auto op = std::make_unique<MatmulOp>();
  Tensor y = op->forward(a.value(), b.value(), trans_a, trans_b, alpha);
  return record(std::move(op), {a, b}, std::move(y));
}

}  // namespace attn
