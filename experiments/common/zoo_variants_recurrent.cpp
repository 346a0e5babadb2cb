// attention-zoo's variants that carry a state from block to block (document 004, "MiniMax-01"
// and "Titans"): lightning attention, the hybrid-lightning stack, a Titans memory as context.
//
// The hybrid stack and shallow models: MiniMax-01 puts one softmax layer after every seven
// lightning layers. A stack of L layers here has softmax attention at layer l when l % 8 == 7
// (the document's rule) OR when l is the last layer, so every group of up to 8 layers ends with
// one softmax layer: the zoo's 2-layer model is lightning then softmax (1:1), an 8-layer model
// is 7:1 exactly, a 10-layer one 8:2. The hybrid then costs no more parameters than either pure
// stack (both layers own the same four d x d projections); what it buys is the read-out layer's
// exact retrieval on top of a linear-time mixer.
#include <memory>
#include <string>

#include "experiments/common/zoo_variants.h"
#include "experiments/common/zoo_variants_recurrent.h"
#include "nn/attention/lightning_attention.h"
#include "nn/attention/titans_memory.h"

namespace attn::experiments {

namespace {

constexpr int64_t kLightningBlock = 16;  // rows per lightning block
constexpr int64_t kTitansSegment = 16;   // rows per Titans segment
constexpr int64_t kTitansPersistent = 2;

Mixer lightning_mixer(const ZooShape& s, Generator& gen) {
  auto la = std::make_shared<nn::LightningAttention>(s.d_model, s.nhead, kLightningBlock, gen);
  return {la, [la](const Var& x) { return la->forward(x); }};
}

Mixer titans_mixer(const ZooShape& s, Generator& gen) {
  auto mac = std::make_shared<nn::TitansMemoryAttention>(
      nn::TitansOptions{.d_model = s.d_model,
                        .nhead = s.nhead,
                        .segment = kTitansSegment,
                        .persistent = kTitansPersistent},
      gen);
  return {mac, [mac](const Var& x) { return mac->forward(x); }};
}

}  // namespace

bool hybrid_layer_is_softmax(int64_t layer, int64_t layers) {
  return layer % 8 == 7 || layer == layers - 1;
}

std::vector<ZooVariant> zoo_recurrent_variants() {
  std::vector<ZooVariant> v;
  v.push_back({"lightning", "004 MiniMax-01, Lightning Attention",
               "causal linear attention in blocks of 16: left product inside, (D,M) state across",
               true,
               [](const ZooShape& s, int64_t, Generator& gen) { return lightning_mixer(s, gen); }});
  v.push_back({"hybrid-lightning", "004 MiniMax-01, Hybrid-lightning",
               "lightning in 7 of every 8 layers, softmax in the 8th and in the last layer", true,
               [](const ZooShape& s, int64_t layer, Generator& gen) {
                 return hybrid_layer_is_softmax(layer, s.layers)
                            ? softmax_mixer(s.d_model, s.nhead, true, gen)
                            : lightning_mixer(s, gen);
               }});
  v.push_back({"titans-mac", "004 Titans, Memory as a Context",
               "segments of 16 attend over [2 persistent, memory reads, segment]; a linear memory "
               "learns each segment's keys->values by a gradient step at test time",
               true,
               [](const ZooShape& s, int64_t, Generator& gen) { return titans_mixer(s, gen); }});
  return v;
}

}  // namespace attn::experiments
