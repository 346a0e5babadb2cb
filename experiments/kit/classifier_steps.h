// Training a token-sequence classifier, and the works kit::StepCosts measures of its training
// step: what attention-zoo, sparse-challenge and triangle-tradeoff share.
//
//   train::TrainResult r = kit::train_classifier(model, task, "softmax", steps, 32, 3e-3, gen);
//   kit::StepWorks works;                               // per length T:
//   works.add(model, fixed_batch, "softmax (timing)");  // once per model
//   costs.add(T, works.forward_backward, works.steps, reps, budget_s);
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "experiments/kit/classification.h"
#include "train/fit.h"

namespace attn::experiments::kit {

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
