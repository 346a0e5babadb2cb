// The train command: build task, model, optimizer and schedule from a TrainConfig, train with
// periodic evaluation and checkpoints, and write the run folder.
//
//   attn::train::TrainConfig cfg;                    // defaults: reversal + transformer
//   cfg.model = "lstm";
//   int code = attn::train::run_train_command(cfg);  // what `attnlab train reversal --model
//                                                    // lstm` calls; 0 when the run finished
//   TrainSummary s = attn::train::train_task(cfg);   // the same, returning the numbers
//
// Run folder (cfg.out, default runs/train-<task>-<model>-<date>-<time>):
//   config.json      every option, the thread count and the command's seeds
//   metrics.csv      step, split, loss, tokens/s, lr, elapsed, eval metrics (one row per log)
//   metrics.jsonl    the same records as JSON lines
//   checkpoint.safetensors   weights, optimizer, step, generator states, data position
//   results.json     final metrics, exact match per held-out length, wall time, tokens/s
//   samples.txt      a few held-out inputs with the model's answers
// --resume PATH continues a run bit-identically (same thread count): the checkpoint is
// validated against the configuration before anything runs, and the metric files keep the
// records up to the checkpoint's step.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "train/run/train_config.h"
#include "train/trainer.h"

namespace attn::train {

class TaskModel;

struct TrainSummary {
  TrainResult result;
  Metrics final_eval;
  std::string main_metric;
  std::map<int64_t, double> exact_match_by_length;  // seq2seq tasks: held-out source length
  std::string model_description;
  std::string run_dir;
  int64_t start_step = 0;  // > 0 when resumed
  // The trained model, for analysis after training (experiments read its attention maps).
  std::shared_ptr<TaskModel> model;
};

// Validates (attn::UsageError before any work), trains, writes the run folder. `out` gets the
// model line and notes; nullptr prints neither (sweeps of scratch runs, whose folders vanish).
TrainSummary train_task(const TrainConfig& cfg, std::FILE* out = stdout);
// train_task plus the printed summary; returns 0 on a finished run. Lets attn::UsageError
// (exit 2) and attn::Error (exit 1) through to the CLI.
int run_train_command(const TrainConfig& cfg);

}  // namespace attn::train
