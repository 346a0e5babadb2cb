// Layer-table rows for attention: mha (nn.MultiheadAttention, and GQA/MQA with q/k/v_proj).
//
// Inputs: x (B,Tq,E) queries; optional memory (B,Tk,E) for cross-attention (key = value =
// memory, else self-attention); optional masks key_padding_mask (B,Tk) and attn_mask (Tq,Tk),
// 1 = not allowed. Config causal=true adds a causal mask. Extra output: attn_weights (B,H,Tq,Tk),
// PyTorch's need_weights=True, average_attn_weights=False.
#include "nn/attention/multihead_attention.h"
#include "nn/parity/table_helpers.h"

namespace attn::nn {

ParityLayer mha_parity_layer(std::shared_ptr<MultiheadAttention> m, bool causal) {
  ParityLayer layer;
  layer.module = m;
  layer.forward = [m, causal](LayerInputs& in) {
    const Var x = in.input("x");
    const Var mem = in.has("memory") ? in.input("memory") : x;
    AttentionMasks masks;
    masks.key_padding_mask = in.optional_mask("key_padding_mask");
    masks.attn_mask = in.optional_mask("attn_mask");
    masks.causal = causal;
    return m->forward(x, mem, mem, masks).out;
  };
  layer.extra_outputs = [m] { return TensorMap{{"attn_weights", m->last_weights()}}; };
  return layer;
}

// Extra keys for the gradcheck inputs: cross=true adds a memory (B,4,E) with a key padding mask
// hiding its last key in batch 1; attn_mask=true adds a (3,3) mask hiding key 0 from query 2.
TensorMap mha_parity_inputs(LayerConfig& c, Generator& gen) {
  const int64_t e = c.get_int("embed_dim", 8);
  TensorMap in{{"x", Tensor::randn({2, 3, e}, gen)}};
  if (c.get_bool("cross", false)) {
    in["memory"] = Tensor::randn({2, 4, e}, gen);
    in["key_padding_mask"] = padding_mask({4, 3}, 4);
  }
  if (c.get_bool("attn_mask", false)) {
    Tensor m({3, 3});
    m.at({2, 0}) = 1;
    in["attn_mask"] = m;
  }
  return in;
}

std::vector<ParityLayerSpec> attention_parity_layers() {
  std::vector<ParityLayerSpec> rows;
  ParityLayerSpec mha;
  mha.name = "mha";
  mha.summary =
      "nn.MultiheadAttention (batch_first): embed_dim=8 num_heads=2 n_kv_heads=num_heads bias=true "
      "separate_projections=false causal=false; inputs x, optional memory, key_padding_mask, "
      "attn_mask";
  mha.build = [](LayerConfig& c, Generator& gen) {
    MultiheadAttentionOptions o;
    const int64_t e = c.get_int("embed_dim", 8), h = c.get_int("num_heads", 2);
    o.n_kv_heads = c.get_int("n_kv_heads", h);
    o.bias = c.get_bool("bias", true);
    o.separate_projections = c.get_bool("separate_projections", false);
    const bool causal = c.get_bool("causal", false);
    return mha_parity_layer(std::make_shared<MultiheadAttention>(e, h, gen, o), causal);
  };
  mha.gradcheck_configs = {
      {"self", {{"embed_dim", "4"}, {"num_heads", "2"}}},
      {"self_causal_nobias",
       {{"embed_dim", "4"}, {"num_heads", "2"}, {"causal", "true"}, {"bias", "false"}}},
      {"cross_padded", {{"embed_dim", "4"}, {"num_heads", "2"}, {"cross", "true"}}},
      {"gqa", {{"embed_dim", "8"}, {"num_heads", "4"}, {"n_kv_heads", "2"}, {"cross", "true"}}},
      // Self-attention without masks other than causal takes the fused kernel (fused_attention);
      // the masked and padded configs above and below take head_slice + sdpa.
      {"gqa_self_causal",
       {{"embed_dim", "8"}, {"num_heads", "4"}, {"n_kv_heads", "2"}, {"causal", "true"}}},
      {"mqa_masked",
       {{"embed_dim", "4"}, {"num_heads", "2"}, {"n_kv_heads", "1"}, {"attn_mask", "true"}}},
  };
  mha.make_inputs = mha_parity_inputs;
  rows.push_back(std::move(mha));
  return rows;
}

}  // namespace attn::nn
