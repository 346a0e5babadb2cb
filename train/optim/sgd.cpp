#include "train/optim/sgd.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"

namespace attn::train {

Sgd::Sgd(std::vector<Var> params, Options options)
    : Optimizer(std::move(params), options.lr, "SGD"), o_(options) {
  require_hyper(o_.momentum >= 0, "SGD", "momentum", o_.momentum, ">= 0");
  require_hyper(o_.weight_decay >= 0, "SGD", "weight_decay", o_.weight_decay, ">= 0");
  require_hyper(o_.dampening >= 0 && o_.dampening <= 1, "SGD", "dampening", o_.dampening,
                "in [0, 1]");
  if (o_.nesterov && (o_.momentum <= 0 || o_.dampening != 0))
    throw Error("SGD: nesterov needs momentum > 0 and dampening = 0");
}

std::string Sgd::describe() const {
  return fmt::format("lr={} momentum={} dampening={} weight_decay={} nesterov={}", lr(),
                     o_.momentum, o_.dampening, o_.weight_decay, o_.nesterov);
}

std::vector<std::string> Sgd::buffer_names() const {
  if (o_.momentum == 0) return {};
  return {"momentum_buffer"};
}

void Sgd::update(Tensor& param, const Tensor& grad, std::map<std::string, Tensor>& state) {
  const int64_t n = param.numel();
  real* p = param.data();
  const real* g0 = grad.data();
  const auto wd = static_cast<real>(o_.weight_decay);
  const auto mom = static_cast<real>(o_.momentum);
  const auto keep = static_cast<real>(1 - o_.dampening);
  const auto neg_lr = static_cast<real>(-lr());
  real* buf = nullptr;
  bool first = false;
  if (o_.momentum != 0) {
    auto it = state.find("momentum_buffer");
    first = it == state.end();
    if (first) it = state.emplace("momentum_buffer", Tensor::empty(param.shape())).first;
    buf = it->second.data();
  }
  for (int64_t i = 0; i < n; ++i) {
    real g = wd != 0 ? g0[i] + wd * p[i] : g0[i];
    if (buf) {
      buf[i] = first ? g : buf[i] * mom + keep * g;
      g = o_.nesterov ? g + mom * buf[i] : buf[i];
    }
    p[i] = p[i] + neg_lr * g;
  }
}

}  // namespace attn::train
