// Truncated backpropagation through time: train on a long stream in chunks of k steps,
// carrying the recurrent state forward but cutting the tape at every chunk boundary.
//
//   std::optional<attn::nn::RecurrentState> state;                 // zeros at the start
//   attn::nn::truncated_bptt(stream_length, /*k=*/32, state,
//       [&](int64_t start, int64_t end, const std::optional<attn::nn::RecurrentState>& s) {
//         attn::nn::RecurrentOutput out = lstm.forward(attn::slice(x, 1, start, end), s);
//         return attn::nn::ChunkResult{loss_of(out.y, start, end), out.state};
//       },
//       [&](int64_t chunk, double loss) { optimizer.step(); optimizer.zero_grad(); });
//
// Full BPTT through T steps keeps T steps of activations on the tape and sends gradients back
// through all of them. Truncated BPTT runs backward after every k steps: memory stays at k
// steps, the state still carries information across chunks (its value), but no gradient crosses
// a boundary (the carried state is detached), so dependencies longer than k are learned only
// through what the forward state happens to carry.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "nn/rnn/recurrent.h"

namespace attn::nn {

struct ChunkResult {
  Var loss;              // scalar loss of this chunk
  RecurrentState state;  // the state after the chunk's last step
};

// Calls chunk(start, end, state) for [0,k), [k,2k), ... up to `length`, with the previous
// chunk's final state detached (state as given for the first chunk), then loss.backward(), then
// after_backward(chunk_index, loss value). Updates `state` to the last chunk's final state
// (detached) and returns the sum of the chunk losses.
double truncated_bptt(
    int64_t length,
    int64_t k,
    std::optional<RecurrentState>& state,
    const std::function<ChunkResult(int64_t, int64_t, const std::optional<RecurrentState>&)>& chunk,
    const std::function<void(int64_t, double)>& after_backward = {});

}  // namespace attn::nn
