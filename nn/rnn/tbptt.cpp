#include "nn/rnn/tbptt.h"

#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"

namespace attn::nn {

double truncated_bptt(
    int64_t length,
    int64_t k,
    std::optional<RecurrentState>& state,
    const std::function<ChunkResult(int64_t, int64_t, const std::optional<RecurrentState>&)>& chunk,
    const std::function<void(int64_t, double)>& after_backward) {
  if (length <= 0 || k <= 0)
    throw Error(
        fmt::format("truncated_bptt: length and k must be positive, got {} and {}", length, k));
  double total = 0;
  int64_t index = 0;
  for (int64_t start = 0; start < length; start += k, ++index) {
    // Cut the tape here: the carried state keeps its value but no gradient flows into the
    // previous chunk (whose records were already consumed by its backward).
    if (state) state = state->detached();
    ChunkResult r = chunk(start, std::min(start + k, length), state);
    if (r.loss.numel() != 1)
      throw Error(fmt::format("truncated_bptt: the chunk loss must be a scalar, got shape {}",
                              shape_str(r.loss.shape())));
    const double loss = r.loss.item();
    total += loss;
    if (r.loss.requires_grad()) r.loss.backward();
    state = r.state.detached();
    if (after_backward) after_backward(index, loss);
  }
  return total;
}

}  // namespace attn::nn
