// Training a MixerModel on a token task whose answer is the last K positions of the input, and
// scoring it: what selective-ssm does for selective copying (K answers, one per marker) and
// associative recall (K = 1, the value read at the last position).
//
//   AnswerBatch b = answer_batch(task, 32, gen);       // ids (32,T), answers (32,K) from ex.tgt
//   Var logits = answer_logits(model, b.ids, 4);       // (B,K,classes): the last 4 positions
//   AnswerRun r = train_on_answers(model, task, {.steps = 400, .batch = 32, .lr = 3e-3}, 7);
//   r.token_accuracy;   // fraction of answer tokens right, on eval_size fresh examples
//   r.answer_accuracy;  // fraction of examples with all K right
//
// The loss is the cross-entropy of the K answer positions only; the positions before them carry
// no target (the model reads them, and nothing asks it to predict them). K = 1 uses the model's
// last-position read-out, MixerModel::forward.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "autograd/tensor.h"
#include "autograd/var.h"
#include "data/task.h"
#include "experiments/common/mixer_model.h"

namespace attn::experiments {

struct AnswerBatch {
  Tensor ids;      // (B,T)
  Tensor answers;  // (B,K) class ids
};

// B examples of `task`; every example must have the same source length and K = tgt.size() >= 1
// (attn::Error otherwise).
AnswerBatch answer_batch(const data::Task& task, int64_t b, Generator& gen);

// The logits of the last k positions, (B,k,classes).
Var answer_logits(const MixerModel& m, const Tensor& ids, int64_t k);

struct AnswerTrainingOptions {
  int64_t steps = 400, batch = 32;
  double lr = 3e-3;
  double clip = 1.0;        // global gradient-norm clip (0: none)
  int64_t log_every = 20;   // the loss curve holds the mean loss of each block of this many steps
  int64_t eval_size = 500;  // fresh examples for the accuracies
};

struct AnswerRun {
  std::vector<double> curve_steps, curve_loss;  // step at the end of each block, its mean loss
  double token_accuracy = 0, answer_accuracy = 0;
  double seconds = 0;  // training time
};

// Trains with Adam on fresh batches (data drawn from seed + 1; the evaluation from seed + 2, a
// stream the training never sees). The model's initialisation is the caller's.
AnswerRun train_on_answers(MixerModel& m,
                           const data::Task& task,
                           const AnswerTrainingOptions& o,
                           uint64_t seed);

// Accuracies on `set`: (token, whole answer).
std::pair<double, double> answer_accuracy(const MixerModel& m, const std::vector<AnswerBatch>& set);

}  // namespace attn::experiments
