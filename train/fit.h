// fit: the one training loop. A model, the settings, and a function that returns the loss of
// this step's batch; fit builds the optimizer and the schedule, clips, checks for divergence,
// evaluates, stops early at a target, checkpoints, writes the metrics file, and under mpirun
// trains data-parallel (every rank computes a part of each global batch).
//
//   attn::train::FitSettings s{.name = "rope", .steps = 2000, .batch_size = 32,
//                              .optimizer = {.lr = 3e-3, .schedule = "cosine", .warmup = 100,
//                                            .clip = 1.0},
//                              .eval_every = 200, .target_metric = "accuracy",
//                              .target_value = 0.99};
//   attn::train::Fit fit(model, s, [&](const attn::train::BatchPart& part) {
//     const Batch b = draw_batch(stream, 32);      // the whole global batch, on every rank
//     const Var logits = model.forward(part.rows(b.ids));    // this rank's rows
//     return attn::train::StepLoss{cross_entropy(logits, part.rows(b.labels))};
//   });
//   attn::train::TrainResult r = fit.run([&](int64_t) {     // optional evaluation
//     return attn::train::Metrics{{"accuracy", accuracy(model, heldout)}};
//   });
//
// The loss function is called once per step, after the gradients were zeroed; fit runs
// backward, (data-parallel: sums the ranks' gradients, train/distributed/), calls
// after_backward, clips, sets the scheduled rate and steps the optimizer. One step alone (for a
// timing measurement) is fit.step().
//
// Data parallelism. Alone, `part` is the whole batch and part.rows(x) is x itself: the run is
// exactly the hand-written loop `zero_grad; loss.backward(); clip; set_lr; step`. As rank r of
// N, part holds rows [begin, end) of the batch (train/distributed/data_parallel.h: contiguous,
// sizes differing by at most one); the loss is this rank's mean over its `count` items and the
// summed gradient weights each rank by count_r / sum(count), which is the gradient of the global
// batch's mean. Every rank evaluates the whole held-out set itself (the weights are identical),
// so early-stopping decisions agree. A training that cannot be split says why in
// FitSettings::not_data_parallel and is refused (attn::UsageError, exit 2) under N > 1 ranks.
//
// Divergence: a non-finite or exploding loss ends the run with a TrainingDiverged naming the
// variant (FitSettings::name) and the step. Anomaly detection (--detect-anomaly,
// attn::set_detect_anomaly) is the process-wide switch that every op here honours: its error
// names the op, the step (or the evaluation after it) and the variant.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/tensor.h"
#include "autograd/var.h"
#include "nn/module.h"
#include "train/optim/optimizer.h"
#include "train/schedule.h"
#include "train/trainer.h"

namespace attn::train {

namespace distributed {
class Communicator;
class GradientSync;
}  // namespace distributed

// The optimizer and its learning-rate schedule (names as `attnlab train` uses them).
struct OptimizerSettings {
  std::string kind = "adam";          // adam | adamw | sgd
  double lr = 1e-3;                   // the peak rate of the schedule
  double weight_decay = 0;            // Adam: L2 in the gradient; AdamW: decoupled; SGD: L2
  double momentum = 0;                // SGD only
  std::string schedule = "constant";  // constant | warmup | cosine | noam (train/schedule.h)
  int64_t warmup = 0;                 // steps of linear rise
  double min_lr = 0;                  // cosine: the rate after the last step
  int64_t d_model = 0;                // noam only: the model width in its formula
  double clip = 0;                    // max global gradient norm; 0: no clipping
};

// Throws attn::Error naming the setting for an unknown kind or schedule, lr < 0, ...
std::unique_ptr<Optimizer> make_optimizer(const std::vector<Var>& params,
                                          const OptimizerSettings& o);
// The schedule for `steps` steps (cosine decays to min_lr at the last step).
std::unique_ptr<LrSchedule> make_lr_schedule(const OptimizerSettings& o, int64_t steps);

struct FitSettings {
  std::string name;        // the variant trained, for messages ("rope", "layers 4 seed 2")
  int64_t steps = 1000;    // the most optimisation steps
  int64_t batch_size = 0;  // the global batch that BatchPart splits; 0: cannot be split
  OptimizerSettings optimizer;
  int64_t eval_every = 0;     // 0: evaluate only after the last step (when run() gets an eval)
  std::string target_metric;  // empty: never stop early
  double target_value = 0;
  bool lower_is_better = false;
  double max_seconds = 0;           // > 0: stop after this much wall time
  double divergence_factor = 1000;  // see TrainerConfig; 0: only non-finite losses stop
  std::string csv_path;             // the metrics file (loss, lr, evaluations); empty: none
  ProgressMode progress = ProgressMode::kOff;
  int64_t log_every = 50;        // metrics-file rows and progress lines
  std::string checkpoint_path;   // empty: no checkpoint; else written by rank 0 at the end
  int64_t checkpoint_every = 0;  // and every this many steps
  // Non-empty: why this training cannot run data-parallel (refused under more than one rank).
  std::string not_data_parallel;
  // Every rank steps its own copy alone (no gradient sum, no rank checks): for timing one
  // training step, which each rank then measures by itself.
  bool this_rank_alone = false;
};

// The rows of the global batch this rank computes.
struct BatchPart {
  int64_t begin = 0, end = 0;  // [begin, end) of `total`
  int64_t total = 0;
  int64_t size() const { return end - begin; }
  bool whole() const { return begin == 0 && end == total; }
  // Rows [begin, end) of x along its first dimension; x itself when the part is whole.
  Tensor rows(const Tensor& x) const;
  template <class T>
  std::vector<T> items(const std::vector<T>& all) const {
    if (whole()) return all;
    return std::vector<T>(all.begin() + begin, all.begin() + end);
  }
};

// What the loss function returns: this rank's mean loss over `count` items (examples or
// scored tokens; 0 means the part's rows), which weights the ranks' gradients.
struct StepLoss {
  Var loss;
  int64_t count = 0;
};

using LossFn = std::function<StepLoss(const BatchPart& part)>;

class Fit {
 public:
  // Checks the settings and, under mpirun, that this training can be split over the ranks
  // (attn::UsageError on every rank otherwise). comm: the ranks (nullptr: this process's,
  // distributed::world(); tests pass a group of threads).
  Fit(nn::Module& model,
      FitSettings settings,
      LossFn loss,
      distributed::Communicator* comm = nullptr);
  ~Fit();
  Fit(const Fit&) = delete;
  Fit& operator=(const Fit&) = delete;

  // Called after the gradients of a step are complete (summed over the ranks), before
  // clipping: e.g. to record a gradient norm.
  void after_backward(std::function<void(int64_t step)> fn) { after_backward_ = std::move(fn); }

  // The loop: steps 1..steps on train::Trainer, evaluating every eval_every steps and after the
  // last; TrainingDiverged names the variant. Under mpirun the ranks' weights are compared at
  // the end.
  TrainResult run(EvalFn eval = {});
  // One optimisation step (the next one); returns its loss (the global batch's).
  StepStats step();

  Optimizer& optimizer() { return *optimizer_; }
  // Items (examples or tokens, StepLoss::count) of every step so far, summed over the ranks.
  int64_t items_seen() const { return items_seen_; }
  const FitSettings& settings() const { return settings_; }

 private:
  StepStats step_at(int64_t s);
  nn::Module& model_;
  FitSettings settings_;
  distributed::Communicator& comm_;
  LossFn loss_;
  std::vector<Var> params_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<LrSchedule> schedule_;
  std::unique_ptr<distributed::GradientSync> sync_;
  BatchPart part_;
  int64_t items_seen_ = 0;
  std::function<void(int64_t)> after_backward_;
};

// Call inside a catch block: rethrows the exception in flight with "variant '<variant>': " in
// front of its message when it is a TrainingDiverged (step and loss kept) or anomaly
// detection's error; any other unchanged. A divergence while anomaly detection was on and the
// loss still finite also says that no op produced a NaN/Inf (the values grew, but stayed finite).
// For trainings outside Fit (experiments that train through train_task).
[[noreturn]] void rethrow_naming_variant(const std::string& variant);

// fit in one call: Fit(model, settings, loss).run(eval).
TrainResult fit(nn::Module& model, const FitSettings& settings, LossFn loss, EvalFn eval = {});

}  // namespace attn::train
