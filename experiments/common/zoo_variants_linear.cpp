// linear-zoo's variants (zoo_variants.h): the members of 004 §4.1-4.2's survey that attention-zoo
// lacks — atrous (dilated) attention and Longformer's local + dilated heads, PolaFormer's
// polarity-aware linear attention, TransNormer's stack (local attention below, normalised linear
// attention above), a SANA block (ReLU linear attention, a convolutional Mix-FFN, no positions)
// and AWRSR's simple and additive attention-weight refinement — with plain linear attention
// (elu + 1) as the kernel baseline they all improve on.
#include "experiments/common/zoo_variants.h"
#include "experiments/kit/kit.h"
#include "nn/attention/dilated_attention.h"
#include "nn/attention/norm_linear_attention.h"
#include "nn/attention/polarity_attention.h"
#include "nn/attention/refined_attention.h"
#include "nn/attention/sana_block.h"

namespace attn::experiments {

namespace {

// TransNormer's local layers: a causal window of 3 back, the same 4 keys per query as atrous.
constexpr int64_t kLocalWindow = kAtrousKeys - 1;
constexpr int64_t kRefineWidth = 16;  // AWRSR: width r of the refined queries and keys

template <class M, class... Args>
Mixer mixer_of(Args&&... args) {
  auto m = std::make_shared<M>(std::forward<Args>(args)...);
  return {m, [m](const Var& x) { return m->forward(x); }};
}

Mixer dilated_mixer(const ZooShape& s, std::vector<int64_t> dilations, Generator& g) {
  auto m = std::make_shared<nn::DilatedAttention>(s.d_model, s.nhead, kAtrousKeys,
                                                  std::move(dilations), g);
  return {m, [m](const Var& x) { return m->forward(x).out; }};
}

// Longformer's mix: the first half of the heads local (dilation 1), the rest dilated.
std::vector<int64_t> local_and_dilated(int64_t heads) {
  std::vector<int64_t> d(static_cast<size_t>(heads), kAtrousDilation);
  for (int64_t h = 0; h < heads / 2; ++h) d[static_cast<size_t>(h)] = 1;
  return d;
}

ZooVariant refined_row(const std::string& name, nn::Refinement kind, const std::string& idea) {
  return {
      name, "004 §0x04 4.2 AWRSR", idea, true, [kind](const ZooShape& s, int64_t, Generator& g) {
        return mixer_of<nn::RefinedAttention>(s.d_model, s.nhead, s.max_len, kRefineWidth, kind, g);
      }};
}

}  // namespace

bool transnormer_layer_is_local(int64_t layer, int64_t layers) {
  return layer < layers / 2;
}

ZooBody zoo_body(const std::string& variant) {
  if (variant == "sana") return {.positions = false, .ff_mult = 0};
  if (variant == "linear-no-positions") return {.positions = false};  // linear-zoo's ablation
  return {};
}

std::vector<ZooVariant> zoo_linear_variants() {
  std::vector<ZooVariant> v;
  v.push_back({"linear", "004 §0x04 4.2 (linear attention)",
               "phi(q).phi(k) with phi = elu + 1, each row normalised: O(T) with a (D,M) state",
               true, [](const ZooShape& s, int64_t, Generator& g) {
                 return linear_mixer(s.d_model, s.nhead, true, g);
               }});
  v.push_back({"atrous", "004 §0x04 4.1 (atrous self-attention)",
               fmt::format("every head reads {} keys {} apart (t, t-{}, ...): O(T k)", kAtrousKeys,
                           kAtrousDilation, kAtrousDilation),
               true, [](const ZooShape& s, int64_t, Generator& g) {
                 return dilated_mixer(
                     s, std::vector<int64_t>(static_cast<size_t>(s.nhead), kAtrousDilation), g);
               }});
  v.push_back({"local-dilated", "004 §0x04 4.1 (Longformer)",
               fmt::format("half the heads read the last {} positions, half {} keys {} apart",
                           kAtrousKeys, kAtrousKeys, kAtrousDilation),
               true, [](const ZooShape& s, int64_t, Generator& g) {
                 return dilated_mixer(s, local_and_dilated(s.nhead), g);
               }});
  v.push_back({"polaformer", "004 §0x04 4.2 PolaFormer",
               "q, k split into positive and negative parts: same-sign and opposite-sign linear "
               "streams on halves of v, a learnt power map x^p",
               true, [](const ZooShape& s, int64_t, Generator& g) {
                 return mixer_of<nn::PolarityAttention>(s.d_model, s.nhead, g);
               }});
  v.push_back({"transnormer", "004 §0x04 4.2 TransNormer",
               "local (window) attention in the lower half of the layers, normalised linear "
               "attention (no denominator, RMS norm) above",
               true, [](const ZooShape& s, int64_t layer, Generator& g) {
                 return transnormer_layer_is_local(layer, s.layers)
                            ? window_mixer(s.d_model, s.nhead, kLocalWindow, true, g)
                            : mixer_of<nn::NormLinearAttention>(s.d_model, s.nhead, g);
               }});
  v.push_back({"sana", "004 §0x04 4.2 SANA",
               "ReLU linear attention + a Mix-FFN with a causal depthwise convolution; no "
               "positions and no other feed-forward",
               true, [](const ZooShape& s, int64_t, Generator& g) {
                 return mixer_of<nn::SanaBlock>(s.d_model, s.nhead, 2 * s.d_model, g);
               }});
  v.push_back(refined_row("awrsr-simple", nn::Refinement::kSimple,
                          "softmax rows A as items: attention over them, softmax((AW_q)(AW_k)^T)"));
  v.push_back(refined_row("awrsr-additive", nn::Refinement::kAdditive,
                          "the refined rows averaged with A: (A + softmax((AW_q)(AW_k)^T)) / 2"));
  return v;
}

}  // namespace attn::experiments
