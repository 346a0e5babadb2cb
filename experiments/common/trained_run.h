// Training a model for an experiment with the train command's machinery (train/run), then
// keeping the trained model and its held-out set for the analysis that follows.
//
//   train::TrainConfig tc;  tc.task = "reversal";  tc.model = "transformer";  tc.steps = 600;
//   TrainedRun r = train_for_experiment(tc, ctx, "train");   // files in <run folder>/train/
//   r.summary.final_eval.at("exact_match");
//   auto* m = dynamic_cast<nn::Seq2SeqTransformer*>(&r.summary.model->module());
//   r.setup.heldout_set;                                       // the same seeded held-out set
//
// Without a run folder (unit tests call experiments with writing off) the training files go to
// a fresh temporary folder that is removed when the TrainedRun is destroyed; a fixed name would
// be refused the second time, since the train command never overwrites a run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "train/run/run_train.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"
#include "train/run/train_config.h"

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

struct TrainedRun {
  train::TrainSummary summary;
  train::TaskSetup setup;         // rebuilt from the same config: the held-out set is seeded
  std::shared_ptr<void> scratch;  // owns the temporary training folder, if one was made
};

// Validates tc (attn::UsageError before any work), trains, and returns the model. The training
// files go to <ctx.dir()>/<subfolder>. A divergence (train::TrainingDiverged) or anomaly
// detection's error names the variant as `subfolder` (`name` below) and the step.
TrainedRun train_for_experiment(train::TrainConfig tc,
                                const RunContext& ctx,
                                const std::string& subfolder);
// The same, with the training files in a fresh temporary folder (named after `name`) that is
// removed when the TrainedRun is destroyed: for sweeps of many short runs whose folders nobody
// reads. A diverging run throws train::TrainingDiverged (and leaves nothing behind).
TrainedRun train_in_scratch(train::TrainConfig tc, const std::string& name);
// train_for_experiment(tcs[i], ctx, subfolders[i]) for every i, side by side (kit::side_by_side,
// one core each, no progress display); what each run prints comes afterwards, in order.
std::vector<TrainedRun> train_side_by_side(const std::vector<train::TrainConfig>& tcs,
                                           const RunContext& ctx,
                                           const std::vector<std::string>& subfolders);

// The fraction of `set` the seq2seq model answers exactly (greedy decoding, batches of 100,
// eval mode, no gradient): what the train command reports as exact_match, for a model whose
// heads or attention rows an experiment has just changed.
double exact_match(train::TaskModel& model, const std::vector<data::Example>& set);

// A TrainConfig with the fields d_model, nhead, layers (num_layers) and dim_ff of `cfg`, the
// seed, and only the final checkpoint; task, model and the rest are left to the caller.
train::TrainConfig transformer_config(const Config& cfg, uint64_t seed);

// The reversal model (task "reversal", model "transformer") as experiments configure it: the
// fields d_model, nhead, layers, dim_ff, src_eos, positional, steps, batch, lr, warmup, eval_every,
// eval_size and target, with these defaults.
struct ReversalDefaults {
  int64_t d_model = 64, nhead = 8, layers = 2, dim_ff = 256;
  int64_t steps = 1000, batch = 64, warmup = 100, eval_every = 100, eval_size = 500;
  double lr = 3e-3, target = 0.99;
};
Config& add_reversal_fields(Config& config, const ReversalDefaults& d = {});
// The TrainConfig those fields describe (only the final checkpoint is written).
train::TrainConfig reversal_train_config(const Config& cfg, uint64_t seed);

}  // namespace attn::experiments
