// Stochastic gradient descent with momentum, dampening, Nesterov and L2 weight decay, as
// torch.optim.SGD:
//
//   g = grad + weight_decay * p
//   buf = g                                        (first step)
//   buf = momentum * buf + (1 - dampening) * g     (later steps)
//   g = nesterov ? g + momentum * buf : buf        (when momentum != 0)
//   p = p - lr * g
//
//   attn::train::Sgd opt(params, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
#pragma once

#include "train/optim/optimizer.h"

namespace attn::train {

class Sgd final : public Optimizer {
 public:
  struct Options {
    double lr = 0.01;
    double momentum = 0;
    double dampening = 0;
    double weight_decay = 0;
    bool nesterov = false;  // needs momentum > 0 and dampening == 0 (as PyTorch requires)
  };
  Sgd(std::vector<Var> params, Options options);
  std::string describe() const override;

 protected:
  void update(Tensor& param, const Tensor& grad, std::map<std::string, Tensor>& state) override;
  std::vector<std::string> buffer_names() const override;

 private:
  Options o_;
};

}  // namespace attn::train
