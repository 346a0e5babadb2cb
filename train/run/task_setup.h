// The task side of a train run: the training task, the held-out task and its fixed set, and
// which metric decides success.
//
//   TaskSetup s = make_task_setup(cfg);
//   ExampleStream stream(s.train, seed);   // endless training examples
//   s.heldout_set;                         // cfg.eval_size fixed examples (other lengths for
//                                          // reversal/copy/sort: eval_min_len..eval_max_len)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/task.h"
#include "train/run/train_config.h"

namespace attn::train {

struct TaskSetup {
  std::shared_ptr<const data::Task> train;
  std::shared_ptr<const data::Task> heldout;
  std::vector<data::Example> heldout_set;
  std::string main_metric;  // "exact_match" (seq2seq), "accuracy" (classification), "perplexity"
  bool lower_is_better = false;
};

// Throws attn::UsageError (naming the field) when the task rejects its settings.
TaskSetup make_task_setup(const TrainConfig& cfg);

// The seeds a run derives from cfg.seed: model initialisation, training stream, held-out set.
uint64_t init_seed(const TrainConfig& cfg);
uint64_t stream_seed(const TrainConfig& cfg);
uint64_t heldout_seed(const TrainConfig& cfg);

}  // namespace attn::train
