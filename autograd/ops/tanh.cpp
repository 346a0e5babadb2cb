// TanhOp: y = tanh(x).
#include <algorithm>

#include "autograd/functional.h"
#include "autograd/kernels/unary.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

struct TanhOp final : Op {
  Tensor y;  // saved output: the derivative is expressed through y alone

  // x (...) -> y (...);  y = tanh(x) = (e^x - e^-x) / (e^x + e^-x), in chunks through
  // kernels::vtanh_n (vectorised in the float build, std::tanh in the double build).
  Tensor forward(const Tensor& x) {
    constexpr int64_t kChunk = 1024;
    y = Tensor::empty(x.shape());
    const real* px = x.data();
    real* py = y.data();
    const int64_t n = x.numel(), chunks = (n + kChunk - 1) / kChunk;
    kernels::parallel_for(chunks, kChunk * kernels::kCostTranscendental, [&](int64_t i) {
      const int64_t begin = i * kChunk;
      kernels::vtanh_n(px + begin, py + begin, std::min(kChunk, n - begin));
    });
    return y;
  }

  // dy/dx = 1 - tanh(x)^2 = 1 - y^2:  dx = dy * (1 - y^2).
  void backward() override {
    accumulate(0, kernels::zip(dy(), y, [](real g, real t) { return g * (1 - t * t); }));
  }

  const char* name() const override { return "tanh"; }
};

Var tanh(const Var& x) {
  auto op = std::make_unique<TanhOp>();
  Tensor y = op->forward(x.value());
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
