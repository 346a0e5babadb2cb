// Batches of a token-sequence classification task (data::sample_classification, no CLS token)
// and a model's loss and accuracy on them: how attention-zoo, sparse-challenge and
// triangle-tradeoff train and score their classifiers.
//
//   kit::ClassBatch b = kit::class_batch(task, 32, gen);             // ids (32,T), labels (32)
//   train::fit(model, s, [&](const train::BatchPart& part) {
//     return kit::class_loss(model, kit::class_batch(task, 32, gen), part);
//   });
//   auto held_out = kit::class_batches(task, 500, 250, eval_gen);   // batches of 250, 250
//   double a = kit::class_accuracy(model, held_out);   // NoGrad, eval mode, then training mode
#pragma once

#include <algorithm>
#include <cstdint>
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

}  // namespace attn::experiments::kit
