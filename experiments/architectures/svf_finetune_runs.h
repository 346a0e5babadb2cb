// svf-finetune's training and measurement for one seed: the base model on task A, then task B
// by full fine-tuning, LoRA and SVF, a task classifier (an SVF expert too), and the two-pass
// inference on a mixed A+B set.
//
//   svf::Settings w = ...;                         // from the fields (svf_finetune.cpp)
//   svf::SeedOutcome o = svf::run_seed(w, ctx, 0);
//   o.methods[0].accuracy_b;                       // full fine-tuning's task-B token accuracy
//   o.mixed.two_pass;                              // the two-pass accuracy on the mixed set
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/options/groups.h"

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::svf {

struct Settings {
  train::options::ModelSettings model;
  train::options::OptimizerSettings base;  // the training of the base model on task A
  int64_t finetune_steps = 0, classifier_steps = 0;
  double finetune_lr = 0;
  std::vector<int64_t> lora_ranks;
  int64_t seq_len = 0, letters = 0;  // string length, alphabet size
  std::string task_a, task_b;        // "reverse", "copy" or "sort" (data/tasks/sequence.h)
  int64_t eval_size = 0, few_shot = 0;
  uint64_t seed = 0;
};

// One way of learning task B from the base model.
struct MethodOutcome {
  std::string name;        // "full", "LoRA r=1", "SVF"
  int64_t trainable = 0;   // kit::count_parameters of what the fit trained
  double accuracy_b = 0;   // held-out token accuracy on task B after fine-tuning
  double retention_a = 0;  // the same model's token accuracy on task A
};

// Token accuracies on the mixed held-out set (eval_size strings of each task).
struct MixedOutcome {
  double only_a = 0, only_b = 0;   // every input under z_A (the base) / under z_B
  double best_mix = 0, alpha = 0;  // a z_A + (1 - a) z_B, a chosen on the few-shot set
  double two_pass = 0;             // the first pass's task decides the z of the second
  double oracle = 0;               // the true task decides (the ceiling of two_pass)
  double first_pass = 0;           // the share of inputs whose task the first pass names right
};

struct SeedOutcome {
  double base_a = 0, base_b = 0;       // the base model's token accuracy on A and on B
  std::vector<MethodOutcome> methods;  // full, LoRA per rank, SVF
  MixedOutcome mixed;
  int64_t svf_expected = 0;  // sum of min(out, in) over the adapted matrices
};

SeedOutcome run_seed(const Settings& w, const RunContext& ctx, int64_t seed_index);

}  // namespace attn::experiments::svf
