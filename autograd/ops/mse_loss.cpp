// MseLossOp: the mean squared difference of two equally shaped tensors (F.mse_loss).
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct MseLossOp final : Op {
  Tensor diff;  // a - b, saved for backward

  // a (...), b (same shape) -> y ();  y = (1/n) sum_i (a_i - b_i)^2
  Tensor forward(const Tensor& a, const Tensor& b) {
    check_same_shape(a, b, "mse_loss (a vs b)");
    diff = Tensor::empty(a.shape());
    const real *pa = a.data(), *pb = b.data();
    real* pd = diff.data();
    kernels::parallel_for(diff.numel(), 1, [&](int64_t i) { pd[i] = pa[i] - pb[i]; });
    double total = 0;  // double accumulator, as in sum: float sums of many terms drift
    for (int64_t i = 0; i < diff.numel(); ++i) total += double(pd[i]) * pd[i];
    return Tensor::scalar(static_cast<real>(total / static_cast<double>(diff.numel())));
  }

  // dy/da_i = 2 (a_i - b_i) / n and dy/db_i = -dy/da_i.
  void backward() override {
    const real k = 2 * dy().item() / static_cast<real>(diff.numel());
    Tensor da = Tensor::empty(diff.shape());
    const real* pd = diff.data();
    real* pa = da.data();
    kernels::parallel_for(da.numel(), 1, [&](int64_t i) { pa[i] = k * pd[i]; });
    if (needs_grad(1)) {
      Tensor db = Tensor::empty(diff.shape());
      real* pb = db.data();
      kernels::parallel_for(db.numel(), 1, [&](int64_t i) { pb[i] = -pa[i]; });
      accumulate(1, db);
    }
    accumulate(0, da);
  }

  const char* name() const override { return "mse_loss"; }
};

Var mse_loss(const Var& a, const Var& b) {
  auto op = std::make_unique<MseLossOp>();
  Tensor y = op->forward(a.value(), b.value());
  return record(std::move(op), {a, b}, std::move(y));
}

}  // namespace attn
