#include "train/optim/adam.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/kernels/parallel.h"

namespace attn::train {

Adam::Adam(std::vector<Var> params, AdamOptions options)
    : Adam(std::move(params), options, false, "Adam") {}

Adam::Adam(std::vector<Var> params, AdamOptions options, bool decoupled, const char* name)
    : Optimizer(std::move(params), options.lr, name), o_(options), decoupled_(decoupled) {
  require_hyper(o_.beta1 >= 0 && o_.beta1 < 1, name, "beta1", o_.beta1, "in [0, 1)");
  require_hyper(o_.beta2 >= 0 && o_.beta2 < 1, name, "beta2", o_.beta2, "in [0, 1)");
  require_hyper(o_.eps >= 0, name, "eps", o_.eps, ">= 0");
  require_hyper(o_.weight_decay >= 0, name, "weight_decay", o_.weight_decay, ">= 0");
}

AdamW::AdamW(std::vector<Var> params, AdamOptions options)
    : Adam(std::move(params), options, true, "AdamW") {}

std::string Adam::describe() const {
  return fmt::format("lr={} betas=({},{}) eps={} weight_decay={}", lr(), o_.beta1, o_.beta2, o_.eps,
                     o_.weight_decay);
}

void Adam::update(Tensor& param, const Tensor& grad, std::map<std::string, Tensor>& state) {
  if (state.empty()) {
    state["exp_avg"] = Tensor::zeros(param.shape());
    state["exp_avg_sq"] = Tensor::zeros(param.shape());
    state["step"] = Tensor::scalar(0);
  }
  Tensor& step_t = state["step"];
  step_t[0] += 1;
  const double t = step_t[0];
  // Scalars in double like PyTorch's Python code, then used as float32 factors.
  const double bias1 = 1 - std::pow(o_.beta1, t);
  const double bias2_sqrt = std::sqrt(1 - std::pow(o_.beta2, t));
  const auto neg_step_size = static_cast<real>(-(lr() / bias1));
  const auto b1 = static_cast<real>(o_.beta1), one_b1 = static_cast<real>(1 - o_.beta1);
  const auto b2 = static_cast<real>(o_.beta2), one_b2 = static_cast<real>(1 - o_.beta2);
  const auto eps = static_cast<real>(o_.eps);
  const auto c2 = static_cast<real>(bias2_sqrt);
  const auto wd = static_cast<real>(o_.weight_decay);
  const auto decay = static_cast<real>(1 - lr() * o_.weight_decay);
  real* p = param.data();
  const real* g0 = grad.data();
  real* m = state["exp_avg"].data();
  real* v = state["exp_avg_sq"].data();
  // Element-wise, so the chunks can run on any thread without changing the result.
  // p, g, m and v are four separate buffers: the loop vectorises (sqrt and division included,
  // given -fno-math-errno). The weight-decay form is chosen outside the loop, and the pointers
  // are __restrict locals: written as one loop with the choice inside it, over pointers
  // captured by reference, GCC left it scalar (vsqrtss and vdivss per value, 6x slower).
  const bool decoupled = decoupled_;
  kernels::parallel_chunks(param.numel(), 8, [=](int64_t begin, int64_t count) {
    real* __restrict pp = p + begin;
    const real* __restrict pg = g0 + begin;
    real* __restrict pm = m + begin;
    real* __restrict pv = v + begin;
    auto moments = [&](int64_t i, real g) {
      pm[i] = pm[i] * b1 + one_b1 * g;
      pv[i] = pv[i] * b2 + one_b2 * (g * g);
      const real denom = std::sqrt(pv[i]) / c2 + eps;
      return neg_step_size * (pm[i] / denom);
    };
    if (decoupled) {  // AdamW: p <- p (1 - lr wd), then the Adam step
#pragma omp simd
      for (int64_t i = 0; i < count; ++i) pp[i] = pp[i] * decay + moments(i, pg[i]);
    } else if (wd != 0) {  // Adam with L2 decay: it enters the gradient, g + wd p
#pragma omp simd
      for (int64_t i = 0; i < count; ++i) pp[i] = pp[i] + moments(i, pg[i] + wd * pp[i]);
    } else {
#pragma omp simd
      for (int64_t i = 0; i < count; ++i) pp[i] = pp[i] + moments(i, pg[i]);
    }
  });
}

}  // namespace attn::train
