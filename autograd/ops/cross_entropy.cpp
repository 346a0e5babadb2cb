// CrossEntropyOp: mean cross-entropy of logits against class ids, fused with log-softmax.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/log_sum_exp.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

struct CrossEntropyOp final : Op {
  Tensor x;                  // saved logits, viewed as (R,C)
  Tensor lse;                // per row (R): log sum_c exp(x_c), the log-softmax normaliser
  std::vector<int64_t> ids;  // per row: the target class, or -1 for an ignored row
  int64_t rows = 0, c = 0, count = 0;  // count: rows that are not ignored
  real smoothing = 0;

  // logits (N,C) or (B,T,C), targets (N) or (B,T) -> y (). With log p_c = x_c - lse and
  // eps = label_smoothing, each kept row r contributes (PyTorch's definition)
  //   l_r = (1 - eps) * (-log p_t) + (eps / C) * sum_c (-log p_c),
  // i.e. the cross-entropy against the target (1-eps) one_hot(t) + eps/C. y = sum_r l_r / count.
  Tensor forward(const Tensor& logits, const Tensor& targets, int64_t ignore, real eps) {
    Shape lead = logits.shape();
    if (!lead.empty()) lead.pop_back();
    if ((logits.rank() != 2 && logits.rank() != 3) || targets.shape() != lead)
      throw Error(fmt::format(
          "cross_entropy: expected logits (N,C) with targets (N), or logits (B,T,C) with targets "
          "(B,T); got logits {} and targets {}",
          shape_str(logits.shape()), shape_str(targets.shape())));
    if (!(eps >= 0 && eps <= 1))
      throw Error(fmt::format("cross_entropy: label_smoothing must be in [0, 1], got {}", eps));
    x = logits, smoothing = eps;
    c = logits.shape().back();
    rows = targets.numel();
    ids.resize(rows);
    count = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const real t = targets[r];
      if (t == static_cast<real>(ignore)) {
        ids[r] = -1;
        continue;
      }
      if (!(t >= 0 && t < static_cast<real>(c)) || t != std::floor(t))
        throw Error(fmt::format(
            "cross_entropy: target {} at row {} is out of range for {} classes (logits {}); "
            "valid targets are 0..{} or ignore_index {}",
            t, r, c, shape_str(logits.shape()), c - 1, ignore));
      ids[r] = static_cast<int64_t>(t);
      ++count;
    }
    if (count == 0)
      throw Error(fmt::format(
          "cross_entropy: every target equals ignore_index {} (targets {}), so the mean is over "
          "zero rows; PyTorch would return NaN here",
          ignore, shape_str(targets.shape())));
    lse = Tensor::empty({rows});
    std::vector<double> row_loss(rows, 0.0);
    const real* px = x.data();
    real* pl = lse.data();
    kernels::parallel_for(rows, c * 4, [&](int64_t r) {
      const real* xr = px + r * c;
      pl[r] = kernels::log_sum_exp(xr, c);
      if (ids[r] < 0) return;
      real sum_x = 0;
      for (int64_t j = 0; j < c; ++j) sum_x += xr[j];
      // -log p_t = lse - x_t and (1/C) sum_c -log p_c = lse - mean_c x_c
      row_loss[r] = (1 - eps) * (pl[r] - xr[ids[r]]) + eps * (pl[r] - sum_x / real(c));
    });
    double loss = 0;  // summed serially in row order: the same result for any thread count
    for (double l : row_loss) loss += l;
    return Tensor::scalar(static_cast<real>(loss / static_cast<double>(count)));
  }

  // d l_r / d x_c = softmax_c - (1 - eps) [c == t] - eps / C  (softmax minus the smoothed
  // target), and 0 for ignored rows; the mean scales everything by dy / count.
  void backward() override {
    Tensor dx = Tensor::empty(x.shape());
    const real g = dy().item() / static_cast<real>(count);
    const real off = smoothing / static_cast<real>(c);
    const real *px = x.data(), *pl = lse.data();
    real* pd = dx.data();
    kernels::parallel_for(rows, c * 3, [&](int64_t r) {
      real* dr = pd + r * c;
      if (ids[r] < 0) {
        std::fill(dr, dr + c, real(0));
        return;
      }
      kernels::exp_shift_row(px + r * c, pl[r], g, off, dr, c);
      dr[ids[r]] -= g * (1 - smoothing);
    });
    accumulate(0, dx);
  }

  const char* name() const override { return "cross_entropy"; }
};

Var cross_entropy(const Var& logits, const Tensor& targets, int64_t ignore_index, real smoothing) {
  auto op = std::make_unique<CrossEntropyOp>();
  Tensor y = op->forward(logits.value(), targets, ignore_index, smoothing);
  return record(std::move(op), {logits}, std::move(y));
}

}  // namespace attn
