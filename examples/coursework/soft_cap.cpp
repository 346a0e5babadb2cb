#include "soft_cap.h"

#include <cmath>
#include <memory>
#include <string>

#include <attnlab/autograd/error.h>

namespace coursework {

using attn::real;
using attn::Tensor;

namespace {

struct SoftCapOp final : attn::Op {
  Tensor u;  // x / c, saved for backward
  Tensor t;  // tanh(x / c), saved for backward

  // x (R,C) viewed as rows, c (C) -> y (R,C);  y = c t,  t = tanh(u),  u = x / c.
  Tensor forward(const Tensor& x, const Tensor& c) {
    const int64_t cols = c.numel();
    if (c.rank() != 1 || x.rank() == 0 || x.shape().back() != cols)
      throw attn::Error("soft_cap: cap must be (C) for x (..., C), got x " +
                        attn::shape_str(x.shape()) + " and cap " + attn::shape_str(c.shape()));
    for (int64_t j = 0; j < cols; ++j)
      if (!(c[j] > 0)) throw attn::Error("soft_cap: every cap must be positive");
    u = Tensor::empty(x.shape());
    t = Tensor::empty(x.shape());
    Tensor y = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      const real cj = c[i % cols];
      u[i] = x[i] / cj;
      t[i] = std::tanh(u[i]);
      y[i] = cj * t[i];
    }
    return y;
  }

  // dy/dx = c (1 - t^2) / c = 1 - t^2
  // dy/dc = t + c (1 - t^2) (-x / c^2) = t - u (1 - t^2)   (summed over the rows: c is shared)
  void backward() override {
    const int64_t cols = inputs[1].numel();
    const Tensor& g = dy();
    Tensor dx = Tensor::empty(t.shape());
    Tensor dc = Tensor::zeros({cols});
    for (int64_t i = 0; i < t.numel(); ++i) {
      const real sech2 = 1 - t[i] * t[i];
      dx[i] = g[i] * sech2;
      dc[i % cols] += g[i] * (t[i] - u[i] * sech2);
    }
    accumulate(0, dx);
    accumulate(1, dc);
  }

  const char* name() const override { return "soft_cap"; }
};

}  // namespace

attn::Var soft_cap(const attn::Var& x, const attn::Var& cap) {
  auto op = std::make_unique<SoftCapOp>();
  Tensor y = op->forward(x.value(), cap.value());
  return attn::record(std::move(op), {x, cap}, std::move(y));
}

SoftCap::SoftCap(int64_t features, double initial_cap) : Module("SoftCap") {
  cap = register_parameter("cap", Tensor::full({features}, static_cast<real>(initial_cap)));
}

}  // namespace coursework
