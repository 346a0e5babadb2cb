// Layer-table rows for attention-zoo's layers (no PyTorch twin: tests/parity/check_zoo.py writes
// each reference out in plain PyTorch, the LSH and DCA ones in a different form from ours — a
// dense (T,T) mask and per-pair rotations — so the two are independent derivations).
//
//   linformer_attention  LinformerAttention (q/k/v/out_proj, e_proj, f_proj)
//   lsh_attention        LshAttention (qk_proj, v_proj, out_proj; buffer rotations)
//   dense_synthesizer    DenseSynthesizer (w1, w2, v_proj, out_proj)
//   random_synthesizer   RandomSynthesizer (scores, v_proj, out_proj)
//   rope_attention       RopeAttention (q/k/v/out_proj), positions plain or dual_chunk
// Input: x (B,T,d_model); the output is the layer's (B,T,d_model). Gradcheck: d_model 4, 2 heads,
// x (2,5,4).
#include <memory>

#include "nn/attention/dual_chunk_attention.h"
#include "nn/attention/linformer_attention.h"
#include "nn/attention/lsh_attention.h"
#include "nn/attention/synthesizer_attention.h"
#include "nn/parity/table_helpers.h"

namespace attn::nn {

namespace {

using Build = std::function<ParityLayer(LayerConfig&, Generator&, int64_t d, int64_t h)>;

// A row with config d_model (8), nhead (2) and the layer's own keys; its gradcheck configs run
// at d_model 4, nhead 2 on x (2,5,4).
ParityLayerSpec zoo_spec(std::string name,
                         std::string summary,
                         Build build,
                         std::vector<std::pair<std::string, ConfigMap>> configs) {
  for (auto& entry : configs) entry.second.insert({{"d_model", "4"}, {"nhead", "2"}});
  return {std::move(name), std::move(summary),
          [build](LayerConfig& c, Generator& gen) {
            return build(c, gen, c.get_int("d_model", 8), c.get_int("nhead", 2));
          },
          std::move(configs),
          [](LayerConfig& c, Generator& gen) {
            return TensorMap{{"x", Tensor::randn({2, 5, c.get_int("d_model", 8)}, gen)}};
          }};
}

}  // namespace

std::vector<ParityLayerSpec> zoo_parity_layers() {
  std::vector<ParityLayerSpec> rows;
  rows.push_back(zoo_spec(
      "linformer_attention", "LinformerAttention: d_model=8 nhead=2 max_len=8 k=3 bias=true",
      [](LayerConfig& c, Generator& gen, int64_t d, int64_t h) {
        return layer_of(std::make_shared<LinformerAttention>(
            d, h, c.get_int("max_len", 8), c.get_int("k", 3), gen, c.get_bool("bias", true)));
      },
      {{"k3", {{"max_len", "6"}}}}));
  rows.push_back(zoo_spec(
      "lsh_attention",
      "LshAttention (Reformer, shared QK): d_model=8 nhead=2 n_buckets=4 chunk=2 causal=false "
      "bias=true",
      [](LayerConfig& c, Generator& gen, int64_t d, int64_t h) {
        return layer_of(std::make_shared<LshAttention>(
            d, h, c.get_int("n_buckets", 4), c.get_int("chunk", 2), gen,
            c.get_bool("causal", false), c.get_bool("bias", true)));
      },
      {{"chunk2", {}}, {"causal_chunk2", {{"causal", "true"}}}}));
  rows.push_back(zoo_spec("dense_synthesizer",
                          "DenseSynthesizer: d_model=8 nhead=2 max_len=8 causal=false bias=true",
                          [](LayerConfig& c, Generator& gen, int64_t d, int64_t h) {
                            return layer_of(std::make_shared<DenseSynthesizer>(
                                d, h, c.get_int("max_len", 8), gen, c.get_bool("causal", false),
                                c.get_bool("bias", true)));
                          },
                          {{"causal", {{"max_len", "6"}, {"causal", "true"}}}}));
  rows.push_back(zoo_spec(
      "random_synthesizer",
      "RandomSynthesizer: d_model=8 nhead=2 max_len=8 causal=false trainable=true bias=true",
      [](LayerConfig& c, Generator& gen, int64_t d, int64_t h) {
        return layer_of(std::make_shared<RandomSynthesizer>(
            d, h, c.get_int("max_len", 8), gen, c.get_bool("causal", false),
            c.get_bool("trainable", true), c.get_bool("bias", true)));
      },
      {{"bidir", {{"max_len", "6"}}},
       {"fixed_causal", {{"trainable", "false"}, {"causal", "true"}}}}));
  rows.push_back(zoo_spec(
      "rope_attention",
      "RopeAttention (causal, rotate-half RoPE): d_model=8 nhead=2 train_len=4 chunk=0 (train_len "
      "/ 2) positions=plain|dual_chunk bias=true",
      [](LayerConfig& c, Generator& gen, int64_t d, int64_t h) {
        const bool dca =
            c.get_choice("positions", "plain", {"plain", "dual_chunk"}) == "dual_chunk";
        return layer_of(std::make_shared<RopeAttention>(
            d, h, gen, c.get_int("train_len", 4), c.get_int("chunk", 0),
            dca ? RopePositions::kDualChunk : RopePositions::kPlain, c.get_bool("bias", true)));
      },
      {{"plain", {}}, {"dual_chunk", {{"positions", "dual_chunk"}}}}));
  return rows;
}

}  // namespace attn::nn
