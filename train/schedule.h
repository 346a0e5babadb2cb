// Learning-rate schedules: the rate for optimizer step s = 1, 2, 3, ...
//
//   auto sched = attn::train::make_schedule({.kind = "noam", .d_model = 64, .warmup = 400});
//   opt.set_lr(sched->lr(opt.steps_taken() + 1));   // before each opt.step()
//
//   constant   lr(s) = lr
//   warmup     lr(s) = lr * min(1, s / warmup)                       (linear warmup, then flat)
//   noam       lr(s) = factor * d_model^-0.5 * min(s^-0.5, s * warmup^-1.5)
//              (the 2017 Transformer paper's formula: linear rise for `warmup` steps, then
//              decay as 1/sqrt(s); the peak, at s = warmup, is factor / sqrt(d_model * warmup))
//   cosine     lr(s) = lr * s / warmup                                       for s <= warmup,
//              min_lr + (lr - min_lr) * (1 + cos(pi * p)) / 2, p = (s - warmup) / (total - warmup)
//              clamped to [0, 1] (so lr stays at min_lr after `total` steps)
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace attn::train {

class LrSchedule {
 public:
  virtual ~LrSchedule() = default;
  // The rate for step s >= 1 (throws for s < 1).
  virtual double lr(int64_t step) const = 0;
  virtual std::string describe() const = 0;
};

struct ScheduleConfig {
  std::string kind = "constant";  // constant | warmup | noam | cosine
  double lr = 1e-3;               // peak rate (all but noam)
  int64_t warmup = 0;             // steps of linear rise (warmup, noam, cosine)
  int64_t total = 0;              // cosine: the step where the decay reaches min_lr
  double min_lr = 0;              // cosine
  int64_t d_model = 512;          // noam
  double factor = 1.0;            // noam
};

// Throws attn::Error naming the field for an unknown kind, lr < 0, warmup < 0 (noam: < 1),
// cosine total <= warmup, d_model <= 0.
std::unique_ptr<LrSchedule> make_schedule(const ScheduleConfig& config);

}  // namespace attn::train
