#include "train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "autograd/error.h"
#include "train/metrics_log.h"

namespace attn::train {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
// Tells an exploding loss from a healthy one without knowing the model or the loss.
//
// Reference: the run's first loss, computed before any update. For cross-entropy over V
// classes it is about ln V (a freshly initialised model guesses nearly uniformly; 3.3 for 26
// letters), and training only lowers it: healthy runs stay within a few times of it even in
// their noisiest early steps. A per-token loss 1000x above it means the model gives the right
// answer a probability like e^-3000, i.e. logits thousands apart, which only happens when the
// updates are blowing up the weights (a learning rate far too high, no clipping). So the
// threshold has three orders of magnitude of margin on one side and is still 10-11 orders
// below what a blown-up run shows (`--lr 1e6 --clip 0` reaches 1e14) on the other.
//
// The reference is at least 1 nat: a resumed run that is nearly perfect (first loss 0.001)
// must not stop because one batch costs a few nats. The loss is smoothed by an exponential
// moving average (weight 0.1, about 10 steps), so one outlier batch must itself be 10x over
// the threshold to stop the run.
class DivergenceWatch {
 public:
  explicit DivergenceWatch(double factor) : factor_(factor) {}
  // False once the loss has exploded; then reference(), smoothed() and threshold() say how.
  bool healthy(double loss) {
    if (factor_ <= 0) return true;
    if (first_ < 0) {
      first_ = loss;
      smoothed_ = loss;
    }
    smoothed_ = 0.9 * smoothed_ + 0.1 * loss;
    return smoothed_ <= threshold();
  }
  double reference() const { return first_; }
  double smoothed() const { return smoothed_; }
  double threshold() const { return factor_ * std::max(first_, 1.0); }

 private:
  double factor_;
  double first_ = -1;  // the run's first loss (-1: none yet)
  double smoothed_ = 0;
};

// The advice every divergence message ends with.
constexpr const char* kDivergenceAdvice =
    "lower the learning rate, clip the gradient norm or warm up; to find the op where the "
    "values first overflow, rerun with anomaly detection (--detect-anomaly on the command "
    "line, attn::set_detect_anomaly(true) in code)";

}  // namespace

Trainer::Trainer(TrainerConfig config, StepFn step, EvalFn eval, CheckpointFn checkpoint)
    : config_(std::move(config)),
      step_(std::move(step)),
      eval_(std::move(eval)),
      checkpoint_(std::move(checkpoint)) {
  auto require = [](bool ok, const std::string& msg) {
    if (!ok) throw Error("Trainer: " + msg);
  };
  require(static_cast<bool>(step_), "a step function is required");
  require(config_.max_steps > 0, fmt::format("max_steps must be > 0, got {}", config_.max_steps));
  require(config_.eval_every >= 0 && config_.log_every >= 0 && config_.checkpoint_every >= 0,
          "eval_every, log_every and checkpoint_every must be >= 0");
  require(config_.target_metric.empty() || static_cast<bool>(eval_),
          fmt::format("target metric '{}' needs an eval function", config_.target_metric));
}

bool Trainer::reached(const Metrics& m) const {
  if (config_.target_metric.empty()) return false;
  auto it = m.find(config_.target_metric);
  if (it == m.end())
    throw Error(fmt::format("Trainer: the eval function returned no '{}' (the target metric)",
                            config_.target_metric));
  return config_.lower_is_better ? it->second <= config_.target_value
                                 : it->second >= config_.target_value;
}

TrainResult Trainer::run(int64_t start_step) {
  if (start_step < 0 || start_step > config_.max_steps)
    throw Error(fmt::format("Trainer: start step {} is outside [0, max_steps = {}]", start_step,
                            config_.max_steps));
  MetricsLog log(config_.csv_path, config_.jsonl_path, start_step > 0 ? start_step : -1);
  Progress progress(config_.max_steps, config_.progress, config_.log_every, start_step);
  TrainResult r;
  r.last_step = start_step;
  r.stop_reason = "max_steps";
  const auto begin = Clock::now();
  DivergenceWatch watch(config_.divergence_factor);
  double window_loss = 0, window_train_s = 0;
  int64_t window_steps = 0, window_tokens = 0;
  auto evaluate = [&](int64_t step) {
    progress.message(fmt::format("step {}: evaluating ...", step));
    Metrics m = eval_(step);
    r.evals.emplace_back(step, m);
    r.final_eval = m;
    log.record(step, "eval", m);
    std::string line = fmt::format("step {} eval:", step);
    for (const auto& [k, v] : m) line += fmt::format(" {} {:.4f}", k, v);
    progress.message(line);
    return reached(m);
  };
  for (int64_t s = start_step + 1; s <= config_.max_steps; ++s) {
    const auto t0 = Clock::now();
    const StepStats st = step_(s);
    const double dt = seconds_since(t0);
    if (!std::isfinite(st.loss)) {
      progress.finish();
      throw TrainingDiverged(fmt::format("training diverged: the loss is {} at step {}; {}",
                                         st.loss, s, kDivergenceAdvice),
                             s, st.loss);
    }
    if (!watch.healthy(st.loss)) {
      progress.finish();
      throw TrainingDiverged(
          fmt::format(
              "training diverged at step {}: the loss's moving average is {:.3g}, more than {}x "
              "the run's first loss {:.3g} (limit {:.3g}): the updates are blowing up the "
              "weights; {}",
              s, watch.smoothed(), config_.divergence_factor, watch.reference(), watch.threshold(),
              kDivergenceAdvice),
          s, st.loss);
    }
    r.last_step = s;
    r.losses.push_back(st.loss);
    r.tokens += st.tokens;
    r.train_seconds += dt;
    window_loss += st.loss;
    window_train_s += dt;
    window_tokens += st.tokens;
    ++window_steps;
    const double tps = r.train_seconds > 0 ? static_cast<double>(r.tokens) / r.train_seconds : 0;
    progress.update(s, {{"loss", st.loss}}, tps);
    const bool last = s == config_.max_steps;
    if ((config_.log_every > 0 && s % config_.log_every == 0) || last) {
      log.record(s, "train",
                 {{"loss", window_loss / static_cast<double>(window_steps)},
                  {"tokens_per_s",
                   window_train_s > 0 ? static_cast<double>(window_tokens) / window_train_s : 0},
                  {"lr", st.lr},
                  {"elapsed_s", seconds_since(begin)}});
      window_loss = window_train_s = 0;
      window_steps = window_tokens = 0;
    }
    bool stop = false;
    if (eval_ && ((config_.eval_every > 0 && s % config_.eval_every == 0) || last)) {
      if (evaluate(s)) {
        r.reached_target = true;
        r.stop_reason = "target reached";
        stop = true;
      }
    }
    bool out_of_time = config_.max_seconds > 0 && seconds_since(begin) >= config_.max_seconds;
    if (!stop && config_.max_seconds > 0 && config_.time_limit_vote)
      out_of_time = config_.time_limit_vote(out_of_time);
    if (!stop && out_of_time) {
      r.stop_reason = "time limit";
      stop = true;
      if (eval_ && !(config_.eval_every > 0 && s % config_.eval_every == 0) && !last)
        r.reached_target = evaluate(s);
    }
    if (checkpoint_ &&
        (stop || last || (config_.checkpoint_every > 0 && s % config_.checkpoint_every == 0)))
      checkpoint_(s);
    if (stop) break;
  }
  progress.finish();
  r.wall_seconds = seconds_since(begin);
  r.tokens_per_second = r.train_seconds > 0 ? static_cast<double>(r.tokens) / r.train_seconds : 0;
  return r;
}

}  // namespace attn::train
