// Layer-table rows for the attention variants and the llama block (no PyTorch twin:
// tests/parity/check_variants.py writes the reference out in explicit PyTorch code).
//
//   linear_attention     LinearAttention (q/k/v/out_proj), phi = elu + 1
//   blockwise_attention  BlockwiseAttention (q/k/v/out_proj), the online-softmax kernel
//   sliding_window       SlidingWindowAttention (q/k/v/out_proj), banded mask + global tokens
//   llama_block          LlamaBlock (attention.wq.., feed_forward.w1.., *_norm)
// Input: x (B,T,d_model); the output is the layer's (B,T,d_model).
#include <memory>

#include "nn/attention/blockwise_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/sliding_window.h"
#include "nn/parity/table_helpers.h"
#include "nn/transformer/llama_block.h"

namespace attn::nn {

namespace {

// x (2,5,d) for every variant; d read from the layer's width key.
std::function<TensorMap(LayerConfig&, Generator&)> x_input(const char* width_key,
                                                           int64_t fallback) {
  return [width_key, fallback](LayerConfig& c, Generator& gen) {
    return TensorMap{{"x", Tensor::randn({2, 5, c.get_int(width_key, fallback)}, gen)}};
  };
}

// A row of the projected-attention family: config d_model (8), nhead (2), causal (false) and
// bias (true), plus the layer's own keys; its gradcheck configs run at d_model 4, nhead 2.
using ProjectedBuild =
    std::function<ParityLayer(LayerConfig&, Generator&, int64_t, int64_t, bool, bool)>;
ParityLayerSpec projected_spec(std::string name,
                               std::string summary,
                               ProjectedBuild build,
                               std::vector<std::pair<std::string, ConfigMap>> configs) {
  for (auto& entry : configs) entry.second.insert({{"d_model", "4"}, {"nhead", "2"}});
  return {std::move(name), std::move(summary),
          [build](LayerConfig& c, Generator& gen) {
            const int64_t d = c.get_int("d_model", 8), h = c.get_int("nhead", 2);
            return build(c, gen, d, h, c.get_bool("causal", false), c.get_bool("bias", true));
          },
          std::move(configs), x_input("d_model", 8)};
}

ParityLayerSpec linear_attention_spec() {
  return projected_spec(
      "linear_attention",
      "LinearAttention, phi = elu+1: d_model=8 nhead=2 causal=false bias=true eps=1e-6",
      [](LayerConfig& c, Generator& gen, int64_t d, int64_t h, bool causal, bool bias) {
        return layer_of(
            std::make_shared<LinearAttention>(d, h, gen, causal, bias, c.get_double("eps", 1e-6)));
      },
      {{"bidir", {}}, {"causal", {{"causal", "true"}}}});
}

ParityLayerSpec blockwise_attention_spec() {
  return projected_spec(
      "blockwise_attention",
      "BlockwiseAttention (online softmax): d_model=8 nhead=2 causal=false block_size=64 bias=true",
      [](LayerConfig& c, Generator& gen, int64_t d, int64_t h, bool causal, bool bias) {
        const int64_t block = c.get_int("block_size", 64);
        return layer_of(std::make_shared<BlockwiseAttention>(d, h, gen, causal, block, bias));
      },
      {{"full_block2", {{"block_size", "2"}}},
       {"causal_block2", {{"causal", "true"}, {"block_size", "2"}}}});
}

ParityLayerSpec sliding_window_spec() {
  return projected_spec(
      "sliding_window",
      "SlidingWindowAttention: d_model=8 nhead=2 window=1 causal=false global_first=false "
      "(token 0 global) bias=true",
      [](LayerConfig& c, Generator& gen, int64_t d, int64_t h, bool causal, bool bias) {
        std::vector<int64_t> global;
        if (c.get_bool("global_first", false)) global.push_back(0);
        auto m = std::make_shared<SlidingWindowAttention>(d, h, c.get_int("window", 1), gen, causal,
                                                          global, bias);
        ParityLayer layer;
        layer.module = m;
        layer.forward = [m](LayerInputs& in) { return m->forward(in.input("x")).out; };
        return layer;
      },
      {{"global", {{"global_first", "true"}}},
       {"causal_w2", {{"window", "2"}, {"causal", "true"}}}});
}

ParityLayerSpec llama_block_spec() {
  ParityLayerSpec s;
  s.name = "llama_block";
  s.summary =
      "LlamaBlock (RMSNorm, RoPE, GQA, SwiGLU): dim=8 n_heads=2 n_kv_heads=n_heads "
      "hidden_dim=16 norm_eps=1e-5 rope_theta=10000 rope_style=interleaved|rotate_half "
      "kernel=sdpa|blockwise block_size=64";
  s.build = [](LayerConfig& c, Generator& gen) {
    LlamaConfig cfg;
    cfg.dim = c.get_int("dim", 8);
    cfg.n_heads = c.get_int("n_heads", 2);
    cfg.n_kv_heads = c.get_int("n_kv_heads", cfg.n_heads);
    cfg.hidden_dim = c.get_int("hidden_dim", 16);
    cfg.norm_eps = c.get_double("norm_eps", 1e-5);
    cfg.rope_theta = c.get_double("rope_theta", 10000.0);
    cfg.rope_style =
        c.get_choice("rope_style", "interleaved", {"interleaved", "rotate_half"}) == "interleaved"
            ? RopeStyle::kInterleaved
            : RopeStyle::kRotateHalf;
    cfg.blockwise = c.get_choice("kernel", "sdpa", {"sdpa", "blockwise"}) == "blockwise";
    cfg.block_size = c.get_int("block_size", 64);
    return layer_of(std::make_shared<LlamaBlock>(cfg, gen));
  };
  s.gradcheck_configs = {
      {"gqa", {{"dim", "8"}, {"n_heads", "4"}, {"n_kv_heads", "2"}, {"hidden_dim", "6"}}},
      {"rotate_half_blockwise",
       {{"dim", "4"},
        {"n_heads", "2"},
        {"hidden_dim", "6"},
        {"rope_style", "rotate_half"},
        {"kernel", "blockwise"},
        {"block_size", "2"}}}};
  s.make_inputs = x_input("dim", 8);
  return s;
}

}  // namespace

std::vector<ParityLayerSpec> variant_parity_layers() {
  return {linear_attention_spec(), blockwise_attention_spec(), sliding_window_spec(),
          llama_block_spec()};
}

}  // namespace attn::nn
