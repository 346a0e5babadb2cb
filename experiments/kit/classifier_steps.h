// Training and scoring a token-sequence classifier (batches from data::sample_classification, no
// CLS token), and the works kit::StepCosts measures of its training step: what attention-zoo,
// sparse-challenge and triangle-tradeoff share.
//
//   train::TrainResult r = kit::train_classifier(model, task, "softmax", steps, 32, 3e-3, gen);
//   auto held_out = kit::class_batches(task, 500, 250, eval_gen);   // batches of 250, 250
//   double a = kit::class_accuracy(model, held_out);   // NoGrad, eval mode, then training mode
//   kit::StepWorks works;                               // per length T:
//   works.add(model, fixed_batch, "softmax (timing)");  // once per model
//   costs.add(T, works.forward_backward, works.steps, reps, budget_s);
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/functional.h"
#include "autograd/generator.h"
#include "autograd/mode.h"
#include "data/batch.h"
#include "data/task.h"
#include "experiments/kit/evaluation.h"
#include "train/fit.h"

namespace attn::experiments::kit {

struct ClassBatch {
  Tensor ids, labels;  // (B,T) token ids, (B) class ids
};

// b fresh examples of `task`.
inline ClassBatch class_batch(const data::Task& task, int64_t b, Generator& gen) {
  data::Batch c = data::sample_classification(task, b, gen, /*with_cls=*/false);
  return {std::move(c.src), std::move(c.labels)};
}

// n fresh examples in batches of at most `chunk` (a held-out set).
inline std::vector<ClassBatch> class_batches(const data::Task& task,
                                             int64_t n,
                                             int64_t chunk,
                                             Generator& gen) {
  std::vector<ClassBatch> set;
  for (int64_t left = n; left > 0; left -= chunk)
    set.push_back(class_batch(task, std::min(chunk, left), gen));
  return set;
}

// The cross-entropy of this rank's rows of b: one step of train::fit.
template <class Model>
train::StepLoss class_loss(Model& m, const ClassBatch& b, const train::BatchPart& part) {
  return {cross_entropy(m.forward(part.rows(b.ids)), part.rows(b.labels))};
}

// Argmax accuracy over `set`, in evaluation mode; the model is left in training mode.
template <class Model>
double class_accuracy(Model& m, const std::vector<ClassBatch>& set) {
  NoGrad off;
  m.eval();
  Accuracy acc;
  for (const ClassBatch& b : set) acc.add(m.forward(b.ids).value(), b.labels);
  m.train();
  return acc.value();
}

// `steps` Adam steps at the constant rate `lr`, each on `batch` fresh examples of `task`.
template <class Model>
train::TrainResult train_classifier(Model& m,
                                    const data::Task& task,
                                    const std::string& name,
                                    int64_t steps,
                                    int64_t batch,
                                    double lr,
                                    Generator& gen) {
  const train::FitSettings s{
      .name = name, .steps = steps, .batch_size = batch, .optimizer = {.lr = lr}};
  return train::fit(m, s, [&](const train::BatchPart& part) {
    return class_loss(m, class_batch(task, batch, gen), part);
  });
}

// Per model, on one fixed batch: a forward + backward (its peak memory is measured) and one Adam
// step at lr 1e-3 (it is timed). The models and the batch must outlive the works.
class StepWorks {
 public:
  template <class Model>
  void add(Model& m, const ClassBatch& b, const std::string& name) {
    // Every rank times its own steps.
    const train::FitSettings s{.name = name, .optimizer = {.lr = 1e-3}, .this_rank_alone = true};
    fits_.push_back(std::make_unique<train::Fit>(
        m, s, [&m, &b](const train::BatchPart& part) { return class_loss(m, b, part); }));
    forward_backward.push_back([&m, &b] {
      m.zero_grad();
      cross_entropy(m.forward(b.ids), b.labels).backward();
    });
    steps.push_back([f = fits_.back().get()] { f->step(); });
  }

  std::vector<std::function<void()>> forward_backward, steps;  // one of each per model

 private:
  std::vector<std::unique_ptr<train::Fit>> fits_;
};

}  // namespace attn::experiments::kit
