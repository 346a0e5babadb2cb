// The efficient-attention zoo of attention-zoo: each variant is a token mixer (mixer_model.h)
// with a name, its document section and a one-line idea, built per layer so that a hybrid stack
// is a variant too.
//
//   for (const ZooVariant& v : zoo_projection_variants()) {
//     MixerModel m(opts, [&](int64_t l, Generator& g) { return v.make(shape, l, g); }, gen);
//     ...
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiments/common/mixer_model.h"

namespace attn::experiments {

// What a variant is built for: width, heads, the longest input (layers with length-sized
// parameters, such as Linformer's projections or a dense Synthesizer, size them by max_len),
// and the depth of the stack (a hybrid decides per layer).
struct ZooShape {
  int64_t d_model = 32, nhead = 2, max_len = 256, layers = 2;
};

struct ZooVariant {
  std::string name;    // as typed on the command line, e.g. "linformer"
  std::string source;  // document and section, e.g. "004 §3"
  std::string idea;    // one line for the report's table
  bool causal = true;  // position t reads positions <= t only
  std::function<Mixer(const ZooShape&, int64_t layer, Generator&)> make;
};

// Softmax (the baseline) and the variants that reshape the score matrix: Linformer, Reformer's
// LSH buckets, Synthesizer (dense and random), dual chunk attention.
std::vector<ZooVariant> zoo_projection_variants();
// The variants that carry a state from block to block: lightning attention, the hybrid 7:1
// stack, a Titans-style memory as context.
std::vector<ZooVariant> zoo_recurrent_variants();

}  // namespace attn::experiments
