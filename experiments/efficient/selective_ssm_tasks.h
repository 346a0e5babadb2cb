// selective-ssm's part 3 (selective_ssm_tasks.cpp): each task learned by a softmax, a linear
// attention and an S6 MixerModel, and the trained S6 model's Delta.
//
//   const std::vector<TaskResult> r = task_parts(cfg, ctx, {{&copy, "copy", "Selective copying"}});
//   const Selection sel = delta_part(*r[0].models[index_of(r[0], "s6")], copy, ctx);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/tasks/selective_copy.h"
#include "experiments/common/mixer_model.h"
#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

struct TaskResult {
  std::vector<std::string> mixers;
  std::vector<int64_t> widths, params;
  std::vector<double> token_acc, answer_acc, seconds;
  std::vector<std::unique_ptr<MixerModel>> models;  // trained, in the order of mixers
};

// A task of part 3: the task, its results' prefix ("copy": copy_*) and its table's title.
struct TaskPart {
  const data::Task* task;
  std::string key, title;
};

// Trains the three mixers on every task (side by side), then reports each task in order (a table,
// a loss figure, results key_*).
std::vector<TaskResult> task_parts(const Config& cfg,
                                   RunContext& ctx,
                                   const std::vector<TaskPart>& tasks);

// The position of `mixer` in r.mixers.
size_t index_of(const TaskResult& r, const std::string& mixer);

struct Selection {
  double data = 0, noise = 0, marker = 0;  // mean Delta over tokens of each kind and channels
  double channels_data_above_noise = 0;    // fraction of channels with a larger mean at data
  int64_t channels = 0;                    // E, the layer's inner channels
};

// The trained S6 model's Delta at data, noise and marker tokens: the note and the results.
Selection delta_part(const MixerModel& s6, const data::SelectiveCopyTask& copy, RunContext& ctx);

}  // namespace attn::experiments
