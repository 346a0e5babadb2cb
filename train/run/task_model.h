// TaskModel: what the train command needs from a model, whatever its architecture.
//
//   std::unique_ptr<TaskModel> m = make_task_model(cfg, *task, limits, gen);
//   LossOut l = m->loss(examples);                 // mean cross-entropy, scored tokens
//   l.loss.backward();
//   m->generate(heldout, /*max_new_tokens=*/18);   // seq2seq tasks: greedy answers
//   m->classify(heldout);                          // classification tasks: labels
//
// Each adapter owns its nn::Module and turns examples into that model's inputs: an
// encoder-decoder reads src and BOS y; a decoder-only model reads BOS x SEP y as one sequence
// and is scored on y only; an encoder with a classifier reads BOS x and predicts the label
// from the BOS slot; a language model predicts every next character; BERT on text is trained
// with masked-language-model corruption.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/var.h"
#include "data/task.h"
#include "nn/module.h"
#include "train/run/train_config.h"

namespace attn::train {

struct LossOut {
  Var loss;            // scalar, mean over scored tokens
  int64_t tokens = 0;  // scored tokens (or examples for classification)
};

class TaskModel {
 public:
  virtual ~TaskModel() = default;
  virtual nn::Module& module() = 0;
  // Generators whose state must be checkpointed (dropout, masking), by name.
  virtual std::map<std::string, Generator*> generators() { return {}; }
  virtual LossOut loss(const std::vector<data::Example>& batch) = 0;
  // Greedy answers (without EOS) for seq2seq tasks.
  virtual std::vector<std::vector<int64_t>> generate(const std::vector<data::Example>& batch,
                                                     int64_t max_new_tokens);
  // Predicted labels for classification tasks.
  virtual std::vector<int64_t> classify(const std::vector<data::Example>& batch);
  // One line such as "RnnSeq2Seq(lstm, bahdanau, hidden 128): 0.21M parameters".
  virtual std::string describe() = 0;
};

// The longest source and target sequences (specials excluded) the model will see, training
// and held-out together: they size the positional tables.
struct SequenceLimits {
  int64_t src = 0;
  int64_t tgt = 0;
};

// Builds the adapter for cfg.model and the task's kind (validate_train_config first).
std::unique_ptr<TaskModel> make_task_model(const TrainConfig& cfg,
                                           const data::Task& task,
                                           SequenceLimits limits,
                                           Generator& gen);

// The recurrent family (lstm, gru, rnn) for every task kind.
std::unique_ptr<TaskModel> make_recurrent_model(const TrainConfig& cfg,
                                                const data::Task& task,
                                                Generator& gen);
// The transformer family (transformer, gpt, bert) for every task kind.
std::unique_ptr<TaskModel> make_transformer_model(const TrainConfig& cfg,
                                                  const data::Task& task,
                                                  SequenceLimits limits,
                                                  Generator& gen);

// --model mixer: nn::MixerModel with the --mixer row as a causal language model
// (train/run/mixer_models.cpp).
std::unique_ptr<TaskModel> make_mixer_model(const TrainConfig& cfg,
                                            const data::Task& task,
                                            SequenceLimits limits,
                                            Generator& gen);

// The class with the largest logit per row: logits (B,C) -> B labels.
std::vector<int64_t> predicted_labels(const Tensor& logits);
// Cuts each row of a (B,steps) id tensor at its first EOS.
std::vector<std::vector<int64_t>> rows_until_eos(const Tensor& ids);
// "1.23M" / "45.6k" parameters.
std::string parameter_count(const nn::Module& m);

}  // namespace attn::train
