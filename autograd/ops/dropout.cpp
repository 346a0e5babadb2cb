// DropoutOp: inverted dropout — zero each element with probability p, scale the rest by 1/(1-p).
#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct DropoutOp final : Op {
  Tensor mask;  // (x's shape): 0 for dropped elements, 1/(1-p) for kept ones

  // x (...) -> y (...);  keep_i ~ Bernoulli(1-p) drawn from gen in row-major order,
  // y_i = x_i * keep_i / (1-p). Scaling at train time keeps E[y_i] = x_i, so evaluation
  // needs no rescaling. p == 1 drops everything (y = 0), as in PyTorch.
  Tensor forward(const Tensor& x, real p, Generator& gen) {
    mask = Tensor::empty(x.shape());
    const real scale = p < 1 ? 1 / (1 - p) : 0;
    real* pm = mask.data();
    // Serial on purpose: the draws must come in a fixed order for runs to be reproducible.
    for (int64_t i = 0; i < mask.numel(); ++i) pm[i] = gen.uniform() < p ? 0 : scale;
    Tensor y = Tensor::empty(x.shape());
    const real* px = x.data();
    real* py = y.data();
    kernels::parallel_for(y.numel(), 1, [&](int64_t i) { py[i] = px[i] * pm[i]; });
    return y;
  }

  // y_i = x_i * mask_i with the mask fixed, so dx_i = dy_i * mask_i (the same mask).
  void backward() override {
    Tensor dx = Tensor::empty(mask.shape());
    const real *pg = dy().data(), *pm = mask.data();
    real* pd = dx.data();
    kernels::parallel_for(dx.numel(), 1, [&](int64_t i) { pd[i] = pg[i] * pm[i]; });
    accumulate(0, dx);
  }

  const char* name() const override { return "dropout"; }
};

Var dropout(const Var& x, real p, Generator& gen, bool training) {
  if (!(p >= 0 && p <= 1))
    throw Error(fmt::format("dropout: p must be a probability in [0, 1], got {} (x {})", p,
                            shape_str(x.shape())));
  if (!training || p == 0) return x;  // the identity: nothing to record, no draws
  auto op = std::make_unique<DropoutOp>();
  Tensor y = op->forward(x.value(), p, gen);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
