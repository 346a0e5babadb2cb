// The efficient-attention zoo of attention-zoo: each variant is a token mixer (mixer_model.h)
// with a name, its document section and a one-line idea, built per layer so that a hybrid stack
// is a variant too.
//
//   for (const ZooVariant& v : zoo_projection_variants()) {
//     MixerModel m(opts, [&](int64_t l, Generator& g) { return v.make(shape, l, g); }, gen);
//     ...
//   }
#pragma once

#include <vector>

#include "experiments/common/mixer_model.h"
#include "nn/mixer/mixer_registry.h"

namespace attn::experiments {

// A zoo variant is a row of the open mixer registry (nn/mixer/mixer_registry.h): name, source,
// idea, causal, make(shape, layer, gen). attention-zoo runs these rows, then the rows students'
// plugins added (nn::mixer_registry().plugin_rows()).
using ZooShape = nn::MixerShape;
using ZooVariant = nn::MixerRow;

// Softmax (the baseline) and the variants that reshape the score matrix: Linformer, Reformer's
// LSH buckets, Synthesizer (dense and random), dual chunk attention.
std::vector<ZooVariant> zoo_projection_variants();
// The variants that carry a state from block to block: lightning attention, the hybrid 7:1
// stack, a Titans-style memory as context.
std::vector<ZooVariant> zoo_recurrent_variants();

}  // namespace attn::experiments
