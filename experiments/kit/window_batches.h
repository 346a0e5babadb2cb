// A language model's windows (data::LanguageModelTask::all_windows, held-out text) in batches of
// at most `size`, in order, each collated by data::collate_language_model: what a held-out
// evaluation loops over.
//
//   kit::NextTokenNll lm;
//   for (const data::Batch& b : kit::window_batches(windows, 64))
//     lm.add(model.forward(b.tgt_in).value(), b.tgt_out, data::kIgnoreIndex);   // (B,T,V)
#pragma once

#include <cstddef>
#include <vector>

#include "data/batch.h"
#include "experiments/kit/chunks.h"

namespace attn::experiments::kit {

inline std::vector<data::Batch> window_batches(const std::vector<data::Example>& windows,
                                               size_t size) {
  std::vector<data::Batch> batches;
  for (const std::vector<data::Example>& part : chunks(windows, size))
    batches.push_back(data::collate_language_model(part));
  return batches;
}

}  // namespace attn::experiments::kit
