// A tiny but complete training setup for the checkpoint, resume and determinism tests:
// embedding -> dropout -> linear tagger on the copy task, Adam, a seeded example stream and
// the model's dropout generator. Every source of state a real run has is here.
#pragma once

#include <memory>
#include <vector>

#include "autograd/functional.h"
#include "data/batch.h"
#include "data/stream.h"
#include "data/tasks/sequence.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "train/checkpoint.h"
#include "train/optim/adam.h"
#include "train/optim/sgd.h"
#include "train/trainer.h"

namespace attn::train::testing {

class Tagger : public nn::Module {
 public:
  Tagger(int64_t vocab, int64_t dim, uint64_t init_seed)
      : Module("Tagger"), dropout_rng(std::make_shared<Generator>(init_seed + 1)) {
    Generator gen(init_seed);
    emb = register_module("emb", std::make_shared<nn::Embedding>(vocab, dim, gen));
    drop = register_module("drop", std::make_shared<nn::Dropout>(0.1, dropout_rng));
    out = register_module("out", std::make_shared<nn::Linear>(dim, vocab, true, gen));
  }
  Var forward(const Tensor& ids) { return out->forward(drop->forward(emb->forward(ids))); }

  std::shared_ptr<Generator> dropout_rng;
  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::Dropout> drop;
  std::shared_ptr<nn::Linear> out;
};

// One run's objects. init_seed differs between "fresh" objects to show that loading a
// checkpoint, not the construction, determines what happens next.
struct TinyRun {
  explicit TinyRun(uint64_t init_seed, int64_t dim = 16)
      : task(std::make_shared<data::SequenceTask>(data::SequenceTask::Config{
            .op = data::SequenceOp::kCopy, .min_len = 3, .max_len = 9, .alphabet = "abcdefgh"})),
        stream(task, 100 + init_seed),
        model(task->tokenizer().vocab_size(), dim, init_seed),
        opt(model.parameters(), {.lr = 0.01}) {}

  StepStats step() {
    data::Batch b = data::collate_language_model(as_tagging(stream.next(8)));
    opt.zero_grad();
    Var loss = cross_entropy(model.forward(b.tgt_in), b.tgt_out, data::kIgnoreIndex);
    loss.backward();
    opt.step();
    return {loss.item(), b.num_target_tokens, opt.lr()};
  }

  TrainingState state() {
    return {.model = &model,
            .optimizer = &opt,
            .generators = {{"dropout", model.dropout_rng.get()}},
            .stream = &stream};
  }

  // copy task as per-position tagging: input x, target x
  static std::vector<data::Example> as_tagging(std::vector<data::Example> ex) {
    for (auto& e : ex) e.tgt = e.src;
    return ex;
  }

  std::shared_ptr<data::SequenceTask> task;
  data::ExampleStream stream;
  Tagger model;
  Adam opt;
};

}  // namespace attn::train::testing
