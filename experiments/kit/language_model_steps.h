// One training step of a language model on fresh windows (data::LanguageModelTask): the step
// train::fit calls, for a model whose forward maps token ids (B,T) to logits (B,T,V). Every
// character model of the catalogue trains with it (mqa-gqa, norms-angles, ffn-memory, ...).
//
//   const data::LanguageModelTask task(corpus, /*block_len=*/64, data::Split::kTrain);
//   train::fit(model, settings, [&](const train::BatchPart& part) {
//     return kit::language_model_step(task, settings.batch_size, gen, part,
//                                     [&](const Tensor& ids) { return model.forward(ids); });
//   });
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/functional.h"
#include "autograd/generator.h"
#include "data/batch.h"
#include "data/task.h"
#include "data/tokenizer.h"
#include "train/fit.h"

namespace attn::experiments::kit {

// `batch` windows drawn from task with gen (every rank draws all of them, in order); this rank's
// rows of them scored: the mean next-token cross-entropy over their every position.
template <class Forward>
train::StepLoss language_model_step(const data::Task& task,
                                    int64_t batch,
                                    Generator& gen,
                                    const train::BatchPart& part,
                                    Forward&& forward) {
  std::vector<data::Example> windows;
  for (int64_t i = 0; i < batch; ++i) windows.push_back(task.sample(gen));
  const data::Batch b = data::collate_language_model(part.items(windows));
  return {cross_entropy(forward(b.tgt_in), b.tgt_out, data::kIgnoreIndex), b.tgt_out.numel()};
}

}  // namespace attn::experiments::kit
