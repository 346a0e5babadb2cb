// Trainer: the loop around a step function you write, so it works for any model.
//
//   attn::train::Trainer trainer(
//       {.max_steps = 2000, .eval_every = 200, .target_metric = "exact_match",
//        .target_value = 0.99, .csv_path = "run/metrics.csv", .jsonl_path = "run/metrics.jsonl"},
//       [&](int64_t step) {                   // one optimisation step
//         auto b = collate_seq2seq(stream.next(32));
//         opt.zero_grad();
//         Var loss = model.loss(b);
//         loss.backward();
//         opt.step();
//         return attn::train::StepStats{loss.item(), b.num_target_tokens, opt.lr()};
//       },
//       [&](int64_t step) { return evaluate(model, heldout); },    // -> {"exact_match": ...}
//       [&](int64_t step) { save_checkpoint(...); });              // optional
//   attn::train::TrainResult r = trainer.run();                    // or run(resumed_step)
//
// What it does: calls step(s) for s = start+1 .. max_steps; shows progress (a bar on a
// terminal, periodic lines otherwise); every eval_every steps (and at the end) calls eval and
// stops early once metrics[target_metric] >= target_value (or <= when lower is better);
// records train loss (mean since the last log), tokens/s, learning rate and eval metrics to
// CSV/JSONL; calls checkpoint every checkpoint_every steps and at the end. A diverging run
// stops with a TrainingDiverged (an attn::Error) naming the step (before that step is
// checkpointed): a NaN or infinite loss, or an exploding one (see divergence_factor).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autograd/error.h"
#include "train/metrics.h"
#include "train/progress.h"

namespace attn::train {

// Thrown by Trainer::run when the loss is not finite or explodes: an attn::Error for the CLI
// (exit code 1), with the step and loss for callers that measure divergence (experiments).
class TrainingDiverged : public Error {
 public:
  TrainingDiverged(const std::string& message, int64_t step, double loss)
      : Error(message), step_(step), loss_(loss) {}
  int64_t step() const { return step_; }  // the step whose loss tripped the check
  double loss() const { return loss_; }   // that step's loss (NaN, inf or finite)

 private:
  int64_t step_;
  double loss_;
};

struct StepStats {
  double loss = 0;
  int64_t tokens = 0;  // tokens processed this step (for tokens/s)
  double lr = 0;       // for the log (0 if not applicable)
};

struct TrainerConfig {
  int64_t max_steps = 1000;
  int64_t eval_every = 0;     // 0: evaluate only at the end
  int64_t log_every = 50;     // metrics-file rows and plain progress lines
  std::string target_metric;  // empty: never stop early
  double target_value = 0;
  bool lower_is_better = false;      // e.g. for "loss" or "perplexity"
  double max_seconds = 0;            // > 0: stop after this much wall time
  int64_t checkpoint_every = 0;      // 0: checkpoint only at the end (when a function is given)
  std::string csv_path, jsonl_path;  // empty: not written
  ProgressMode progress = ProgressMode::kAuto;
  // Exploding-loss check: the run stops when the loss's moving average (about 10 steps) rises
  // above divergence_factor x max(the run's first loss, 1). 0 turns it off; a non-finite loss
  // always stops the run. See DivergenceCheck in train/divergence.h for why 1000 is safe.
  double divergence_factor = 1000;
  // Data-parallel runs: turns this rank's "the time limit has passed" into the ranks' common
  // decision (rank 0's clock), so every rank stops after the same step. Empty: decide alone.
  std::function<bool(bool)> time_limit_vote;
};

struct TrainResult {
  int64_t last_step = 0;  // the last step taken
  bool reached_target = false;
  std::string stop_reason;   // "target reached", "max_steps", "time limit"
  double wall_seconds = 0;   // this run, evaluation included
  double train_seconds = 0;  // time inside step functions only
  int64_t tokens = 0;
  double tokens_per_second = 0;  // tokens / train_seconds
  std::vector<double> losses;    // one per step of this run
  std::vector<std::pair<int64_t, Metrics>> evals;
  Metrics final_eval;  // the last evaluation
};

using StepFn = std::function<StepStats(int64_t step)>;
using EvalFn = std::function<Metrics(int64_t step)>;
using CheckpointFn = std::function<void(int64_t step)>;

class Trainer {
 public:
  // Throws attn::Error for max_steps <= 0, negative intervals, or a target metric without an
  // eval function.
  Trainer(TrainerConfig config, StepFn step, EvalFn eval = {}, CheckpointFn checkpoint = {});
  // start_step: steps already taken (0 for a fresh run, the checkpoint's step on resume).
  TrainResult run(int64_t start_step = 0);

 private:
  bool reached(const Metrics& m) const;
  TrainerConfig config_;
  StepFn step_;
  EvalFn eval_;
  CheckpointFn checkpoint_;
};

}  // namespace attn::train
