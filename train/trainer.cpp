#include "train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <typeinfo>

#include "autograd/error.h"
#include "autograd/tape.h"
#include "train/divergence.h"
#include "train/metrics_log.h"

namespace attn::train {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
// Anomaly detection (attn::set_detect_anomaly) throws a plain attn::Error naming the op that
// first produced a NaN/Inf; only the loop knows which step (or evaluation) ran it, so its
// message gets "step N: " (`when` and the step) in front. With detection on, so does any other
// plain attn::Error (indistinguishable, and the place helps it too); subclasses (UsageError,
// TrainingDiverged) and every error with detection off pass through as they are.
template <class Work>
auto naming_the_step(const char* when, int64_t step, Work&& work) {
  try {
    return work();
  } catch (const Error& e) {
    if (typeid(e) != typeid(Error) || !detect_anomaly()) throw;
    throw Error(fmt::format("{} {}: {}", when, step, e.what()));
  }
}

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
  DivergenceCheck diverged("", config_.divergence_factor);
  double window_loss = 0, window_train_s = 0;
  int64_t window_steps = 0, window_tokens = 0;
  auto evaluate = [&](int64_t step) {
    progress.message(fmt::format("step {}: evaluating ...", step));
    Metrics m = naming_the_step("the evaluation after step", step, [&] { return eval_(step); });
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
    const StepStats st = naming_the_step("step", s, [&] { return step_(s); });
    const double dt = seconds_since(t0);
    try {
      diverged.check(s, st.loss);
    } catch (const TrainingDiverged&) {
      progress.finish();
      throw;
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
