// Optimizer: the base of SGD, Adam and AdamW (PyTorch's update rules, float32 like PyTorch).
//
//   attn::train::Adam opt(model.parameters(), {.lr = 1e-3});
//   for (...) {
//     opt.zero_grad();
//     loss.backward();
//     attn::train::clip_grad_norm(model.parameters(), 1.0);
//     opt.set_lr(schedule.lr(opt.steps_taken() + 1));
//     opt.step();
//   }
//   attn::TensorMap s = opt.state_dict();   // into a checkpoint (train/checkpoint.h) ...
//   opt.load_state_dict(s);                 // ... and back
//
// Like PyTorch, a parameter whose gradient was never set (no backward reached it) is skipped,
// and per-parameter state (momentum, moments) is created at the first step that updates it.
// The state is a TensorMap named "<parameter index>.<buffer>", e.g. "3.exp_avg".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autograd/safetensors.h"
#include "autograd/var.h"

namespace attn::train {

class Optimizer {
 public:
  Optimizer(std::vector<Var> params, double lr, std::string type_name);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter that has a gradient.
  void step();
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr);
  int64_t steps_taken() const { return steps_; }
  const std::string& type_name() const { return type_name_; }
  const std::vector<Var>& params() const { return params_; }
  // The hyperparameters, e.g. "lr=0.001 betas=(0.9,0.999) eps=1e-08 weight_decay=0".
  virtual std::string describe() const = 0;

  // Per-parameter buffers plus "steps" (a scalar tensor).
  TensorMap state_dict() const;
  // Checks every name and shape (listing all problems) before changing anything.
  void load_state_dict(const TensorMap& state);
  // The same checks without loading (throws attn::Error listing the problems).
  void check_state_dict(const TensorMap& state) const;

 protected:
  // One parameter's update. `state` holds its buffers (empty before its first update).
  virtual void update(Tensor& param, const Tensor& grad, std::map<std::string, Tensor>& state) = 0;
  // Buffer names this optimizer may store for a parameter.
  virtual std::vector<std::string> buffer_names() const = 0;

 private:
  // The per-parameter buffers of a state dict, or an attn::Error listing every problem.
  std::vector<std::map<std::string, Tensor>> parse_state(const TensorMap& state) const;
  std::vector<Var> params_;
  std::vector<std::map<std::string, Tensor>> state_;
  double lr_;
  int64_t steps_ = 0;
  std::string type_name_;
};

// Throws attn::Error "<optimizer>: <field> must be ..., got ..." for an invalid hyperparameter.
void require_hyper(
    bool ok, const std::string& optimizer, const char* field, double value, const char* rule);

}  // namespace attn::train
