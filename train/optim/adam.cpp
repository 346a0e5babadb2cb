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
  // p, g, m and v are four separate buffers: the loop vectorises (sqrt and division included).
  kernels::parallel_chunks(param.numel(), 8, [&](int64_t begin, int64_t count) {
#pragma omp simd
    for (int64_t i = begin; i < begin + count; ++i) {
      real g = g0[i];
      if (decoupled_)
        p[i] = p[i] * decay;
      else if (wd != 0)
        g = g + wd * p[i];
      m[i] = m[i] * b1 + one_b1 * g;
      v[i] = v[i] * b2 + one_b2 * (g * g);
      const real denom = std::sqrt(v[i]) / c2 + eps;
      p[i] = p[i] + neg_step_size * (m[i] / denom);
    }
  });
}

}  // namespace attn::train
