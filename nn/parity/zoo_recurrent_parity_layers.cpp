// Layer-table rows for attention-zoo's recurrent variants (no PyTorch twin:
// tests/parity/check_zoo_recurrent.py writes each reference in a few lines of PyTorch):
//
//   lightning_attention  LightningAttention (q/k/v/out_proj): blocked causal linear attention
//   titans_mac           TitansMemoryAttention (q/k/v/out_proj, mem_q/k/v, memory_init,
//                        persistent_tokens, eta/theta/alpha_logit): memory as context
// Input: x (B,T,d_model); the output is the layer's (B,T,d_model). The gradcheck rows run over
// several blocks / segments, so their Jacobians pass through the block state and through the
// memory's test-time gradient steps.
#include <memory>

#include "nn/attention/lightning_attention.h"
#include "nn/attention/titans_memory.h"
#include "nn/parity/table_helpers.h"

namespace attn::nn {

namespace {

std::function<TensorMap(LayerConfig&, Generator&)> x_input(int64_t t_len) {
  return [t_len](LayerConfig& c, Generator& gen) {
    return TensorMap{{"x", Tensor::randn({2, t_len, c.get_int("d_model", 8)}, gen)}};
  };
}

ParityLayerSpec lightning_spec() {
  ParityLayerSpec s;
  s.name = "lightning_attention";
  s.summary = "LightningAttention (causal, phi = elu+1): d_model=8 nhead=2 block_size=4 bias=true";
  s.build = [](LayerConfig& c, Generator& gen) {
    return layer_of(std::make_shared<LightningAttention>(
        c.get_int("d_model", 8), c.get_int("nhead", 2), c.get_int("block_size", 4), gen,
        c.get_bool("bias", true)));
  };
  // T = 5: blocks 2+2+1 (the state crosses two boundaries) and one block of 5.
  s.gradcheck_configs = {{"block2", {{"d_model", "4"}, {"block_size", "2"}}},
                         {"block8", {{"d_model", "4"}, {"block_size", "8"}}}};
  s.make_inputs = x_input(5);
  return s;
}

ParityLayerSpec titans_spec() {
  ParityLayerSpec s;
  s.name = "titans_mac";
  s.summary =
      "TitansMemoryAttention (memory as context): d_model=8 nhead=2 segment=3 persistent=2 "
      "bias=true";
  s.build = [](LayerConfig& c, Generator& gen) {
    return layer_of(std::make_shared<TitansMemoryAttention>(
        TitansOptions{.d_model = c.get_int("d_model", 8),
                      .nhead = c.get_int("nhead", 2),
                      .segment = c.get_int("segment", 3),
                      .persistent = c.get_int("persistent", 2),
                      .bias = c.get_bool("bias", true)},
        gen));
  };
  // T = 5 in segments of 2: two memory writes (the second with momentum) before the last read.
  s.gradcheck_configs = {
      {"seg2", {{"d_model", "4"}, {"segment", "2"}}},
      {"seg2_no_persistent", {{"d_model", "4"}, {"segment", "2"}, {"persistent", "0"}}}};
  s.make_inputs = x_input(5);
  return s;
}

}  // namespace

std::vector<ParityLayerSpec> zoo_recurrent_parity_layers() {
  return {lightning_spec(), titans_spec()};
}

}  // namespace attn::nn
