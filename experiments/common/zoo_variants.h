// The efficient-attention zoo of attention-zoo: each variant is a token mixer (mixer_model.h)
// with a name, its document section and a one-line idea, built per layer so that a hybrid stack
// is a variant too (zoo_variants_projection.cpp, zoo_variants_recurrent.cpp); and the recurrent
// variants' document rows.
//
//   for (const ZooVariant& v : zoo_projection_variants()) {
//     MixerModel m(opts, [&](int64_t l, Generator& g) { return v.make(shape, l, g); }, gen);
//     ...
//   }
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/common/mixer_model.h"
#include "experiments/report/compare.h"
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

// linear-zoo's members (zoo_variants_linear.cpp): plain linear attention (elu + 1), atrous and
// Longformer-style local + dilated attention, PolaFormer, TransNormer, a SANA block and AWRSR's
// simple and additive refinements.
std::vector<ZooVariant> zoo_linear_variants();
// The atrous heads' pattern: kAtrousKeys keys kAtrousDilation apart (4 keys over the last 7
// positions).
inline constexpr int64_t kAtrousKeys = 4;
inline constexpr int64_t kAtrousDilation = 2;

// The model body a variant asks for: SANA's block brings its own feed-forward (the Mix-FFN) and
// needs no positions; every other variant takes MixerModel's defaults.
struct ZooBody {
  bool positions = true;
  int64_t ff_mult = 2;
};
ZooBody zoo_body(const std::string& variant);

// TransNormer's rule: local attention in the lower half of the layers (layer < L / 2),
// normalised linear attention above.
bool transnormer_layer_is_local(int64_t layer, int64_t layers);

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
