#include "train/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"

namespace attn::train {

namespace {

void check_step(int64_t step) {
  if (step < 1) throw Error(fmt::format("lr schedule: steps count from 1, got {}", step));
}

class Constant final : public LrSchedule {
 public:
  explicit Constant(double lr) : lr_(lr) {}
  double lr(int64_t step) const override {
    check_step(step);
    return lr_;
  }
  std::string describe() const override { return fmt::format("constant lr={}", lr_); }

 private:
  double lr_;
};

class Warmup final : public LrSchedule {
 public:
  Warmup(double lr, int64_t warmup) : lr_(lr), warmup_(warmup) {}
  double lr(int64_t step) const override {
    check_step(step);
    if (warmup_ == 0) return lr_;
    return lr_ * std::min(1.0, static_cast<double>(step) / static_cast<double>(warmup_));
  }
  std::string describe() const override {
    return fmt::format("linear warmup lr={} warmup={}", lr_, warmup_);
  }

 private:
  double lr_;
  int64_t warmup_;
};

class Noam final : public LrSchedule {
 public:
  Noam(int64_t d_model, int64_t warmup, double factor)
      : d_model_(d_model), warmup_(warmup), factor_(factor) {}
  double lr(int64_t step) const override {
    check_step(step);
    const auto s = static_cast<double>(step);
    return factor_ * std::pow(static_cast<double>(d_model_), -0.5) *
           std::min(std::pow(s, -0.5), s * std::pow(static_cast<double>(warmup_), -1.5));
  }
  std::string describe() const override {
    return fmt::format("noam d_model={} warmup={} factor={}", d_model_, warmup_, factor_);
  }

 private:
  int64_t d_model_, warmup_;
  double factor_;
};

class Cosine final : public LrSchedule {
 public:
  Cosine(double lr, int64_t warmup, int64_t total, double min_lr)
      : lr_(lr), warmup_(warmup), total_(total), min_lr_(min_lr) {}
  double lr(int64_t step) const override {
    check_step(step);
    if (step <= warmup_) return lr_ * static_cast<double>(step) / static_cast<double>(warmup_);
    const double p = std::clamp(
        static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_), 0.0, 1.0);
    return min_lr_ + (lr_ - min_lr_) * 0.5 * (1.0 + std::cos(M_PI * p));
  }
  std::string describe() const override {
    return fmt::format("cosine lr={} warmup={} total={} min_lr={}", lr_, warmup_, total_, min_lr_);
  }

 private:
  double lr_;
  int64_t warmup_, total_;
  double min_lr_;
};

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("lr schedule: " + what);
}

}  // namespace

std::unique_ptr<LrSchedule> make_schedule(const ScheduleConfig& c) {
  require(std::isfinite(c.lr) && c.lr >= 0, fmt::format("lr must be >= 0, got {}", c.lr));
  require(c.warmup >= 0, fmt::format("warmup must be >= 0, got {}", c.warmup));
  if (c.kind == "constant") return std::make_unique<Constant>(c.lr);
  if (c.kind == "warmup") return std::make_unique<Warmup>(c.lr, c.warmup);
  if (c.kind == "noam") {
    require(c.d_model > 0, fmt::format("noam needs d_model > 0, got {}", c.d_model));
    require(c.warmup >= 1, fmt::format("noam needs warmup >= 1, got {}", c.warmup));
    require(c.factor > 0, fmt::format("noam needs factor > 0, got {}", c.factor));
    return std::make_unique<Noam>(c.d_model, c.warmup, c.factor);
  }
  if (c.kind == "cosine") {
    require(c.total > c.warmup,
            fmt::format("cosine needs total > warmup, got total={} warmup={}", c.total, c.warmup));
    require(c.min_lr >= 0 && c.min_lr <= c.lr,
            fmt::format("cosine needs 0 <= min_lr <= lr, got min_lr={}", c.min_lr));
    return std::make_unique<Cosine>(c.lr, c.warmup, c.total, c.min_lr);
  }
  throw Error(
      fmt::format("lr schedule: unknown kind '{}' (expected constant, warmup, noam or "
                  "cosine)",
                  c.kind));
}

}  // namespace attn::train
