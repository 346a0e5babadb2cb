// What zoo_variants_recurrent.cpp offers beyond zoo_recurrent_variants() (declared in
// zoo_variants.h): the hybrid's layer rule and the recurrent variants' document rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/common/zoo_variants.h"
#include "experiments/report/compare.h"

namespace attn::experiments {

// The hybrid-lightning rule: softmax attention at layer l of an L-layer stack when l % 8 == 7
// (MiniMax-01's one in eight) or l == L-1 (so a stack shallower than 8 still ends with one).
bool hybrid_layer_is_softmax(int64_t layer, int64_t layers);

// "Token-mixer parameters ...: softmax N, lightning N, ..." for every variant of vs at this
// shape, and the hybrid's layer pattern: a note for the report.
std::string mixer_parameter_note(const std::vector<ZooVariant>& vs, const ZooShape& shape);

// attention-zoo's document rows for the recurrent variants among vs (those present): memory
// exponents (linear in T), recall against softmax's (per variant, in vs's order), and the
// hybrid's peak memory against softmax's at the longest length (peak_mib[variant][length]).
void add_recurrent_claims(DocumentComparison& cmp,
                          const std::vector<ZooVariant>& vs,
                          const std::vector<double>& recall,
                          const std::vector<double>& memory_slope,
                          const std::vector<std::vector<double>>& peak_mib);

}  // namespace attn::experiments
