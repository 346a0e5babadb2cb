#include "train/divergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "train/trainer.h"

namespace attn::train {

namespace {

// The advice every divergence message ends with.
constexpr const char* kDivergenceAdvice =
    "lower the learning rate, clip the gradient norm or warm up; to find the op where the "
    "values first overflow, rerun with anomaly detection (--detect-anomaly on the command "
    "line, attn::set_detect_anomaly(true) in code)";

}  // namespace

DivergenceCheck::DivergenceCheck(std::string variant, double factor)
    : variant_(std::move(variant)), factor_(factor) {}

void DivergenceCheck::check(int64_t step, double loss) {
  const std::string who = variant_.empty() ? "" : fmt::format("variant '{}': ", variant_);
  if (!std::isfinite(loss))
    throw TrainingDiverged(fmt::format("{}training diverged: the loss is {} at step {}; {}", who,
                                       loss, step, kDivergenceAdvice),
                           step, loss);
  if (factor_ <= 0) return;
  if (first_ < 0) first_ = smoothed_ = loss;
  smoothed_ = 0.9 * smoothed_ + 0.1 * loss;
  const double threshold = factor_ * std::max(first_, 1.0);
  if (smoothed_ <= threshold) return;
  throw TrainingDiverged(
      fmt::format("{}training diverged at step {}: the loss's moving average is {:.3g}, more "
                  "than {}x the run's first loss {:.3g} (limit {:.3g}): the updates are blowing "
                  "up the weights; {}",
                  who, step, smoothed_, factor_, first_, threshold, kDivergenceAdvice),
      step, loss);
}

}  // namespace attn::train
