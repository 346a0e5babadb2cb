// The pieces of zoo_variants_recurrent.cpp that tests and the attention-zoo report read beyond
// zoo_recurrent_variants() (declared in zoo_variants.h).
#pragma once

#include <cstdint>

namespace attn::experiments {

// The hybrid-lightning rule: softmax attention at layer l of an L-layer stack when l % 8 == 7
// (MiniMax-01's one in eight) or l == L-1 (so a stack shallower than 8 still ends with one).
bool hybrid_layer_is_softmax(int64_t layer, int64_t layers);

}  // namespace attn::experiments
