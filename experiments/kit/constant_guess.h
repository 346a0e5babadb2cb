// The accuracy of the best constant guess: always predicting the most frequent label, the
// baseline a model must beat to show it used its input (masked-token accuracy, for one).
//
//   kit::ConstantGuess g = kit::constant_guess(m.labels, data::kIgnoreIndex);  // (B,T) class ids
//   g.accuracy;   // count of the most frequent label / g.scored
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>

#include "autograd/error.h"
#include "autograd/tensor.h"

namespace attn::experiments::kit {

struct ConstantGuess {
  double accuracy = 0;
  int64_t scored = 0;  // the labels not equal to ignore_index
};

// Over every label not equal to ignore_index; throws attn::Error when there is none.
inline ConstantGuess constant_guess(const Tensor& labels, int64_t ignore_index) {
  std::map<int64_t, int64_t> counts;
  int64_t most = 0, scored = 0;
  for (int64_t i = 0; i < labels.numel(); ++i)
    if (const auto label = static_cast<int64_t>(labels[i]); label != ignore_index) {
      most = std::max(most, ++counts[label]);
      ++scored;
    }
  if (scored == 0) throw Error("constant_guess: every label is ignore_index");
  return {static_cast<double>(most) / static_cast<double>(scored), scored};
}

}  // namespace attn::experiments::kit
