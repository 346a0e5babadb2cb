// Adam and AdamW, as torch.optim.Adam / AdamW (PyTorch 1.13's single-tensor code path):
//
//   t = t + 1
//   Adam:  g = grad + weight_decay * p          (L2 penalty folded into the gradient)
//   AdamW: p = p * (1 - lr * weight_decay)      (decoupled decay, applied to p first)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//
// Note where eps sits: it is added after the bias correction of sqrt(v), exactly as PyTorch
// does (the 2014 paper adds it to the corrected v-hat's root, which is the same thing).
//
//   attn::train::Adam opt(params, {.lr = 1e-3});
//   attn::train::AdamW optw(params, {.lr = 1e-3, .weight_decay = 0.01});
#pragma once

#include "train/optim/optimizer.h"

namespace attn::train {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // PyTorch's defaults: 0 for Adam, 0.01 for AdamW
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Var> params, AdamOptions options);
  std::string describe() const override;

 protected:
  Adam(std::vector<Var> params, AdamOptions options, bool decoupled, const char* name);
  void update(Tensor& param, const Tensor& grad, std::map<std::string, Tensor>& state) override;
  std::vector<std::string> buffer_names() const override {
    return {"exp_avg", "exp_avg_sq", "step"};
  }

 private:
  AdamOptions o_;
  bool decoupled_;  // AdamW
};

class AdamW final : public Adam {
 public:
  // weight_decay defaults to 0.01 here, as in torch.optim.AdamW.
  AdamW(std::vector<Var> params, AdamOptions options = {.weight_decay = 0.01});
};

}  // namespace attn::train
