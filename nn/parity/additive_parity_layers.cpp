// Layer-table row for additive attention: additive_attention, MultiheadAttention with Bahdanau's
// score w_h^T tanh(q_i + k_j) per head (nn/attention/additive_attention.h).
//
// Inputs as the mha row: x (B,Tq,E) queries; optional memory (B,Tk,E) for cross-attention (key
// = value = memory, else self-attention); optional masks key_padding_mask (B,Tk) and attn_mask
// (Tq,Tk), 1 = not allowed. Config causal=true adds a causal mask. Extra output: attn_weights
// (B,H,Tq,Tk). PyTorch has no such module: tests/parity/check_additive.py carries a reference of
// a few lines with the same parameter names (in_proj_weight, in_proj_bias, out_proj.*,
// additive_v).
#include "nn/attention/multihead_attention.h"
#include "nn/parity/table_helpers.h"

namespace attn::nn {

std::vector<ParityLayerSpec> additive_parity_layers() {
  std::vector<ParityLayerSpec> rows;
  ParityLayerSpec add;
  add.name = "additive_attention";
  add.summary =
      "MultiheadAttention with additive scores w_h^T tanh(q+k): embed_dim=8 num_heads=2 "
      "bias=true causal=false; inputs x, optional memory, key_padding_mask, attn_mask";
  add.build = [](LayerConfig& c, Generator& gen) {
    MultiheadAttentionOptions o;
    o.score = AttentionScore::kAdditive;
    o.bias = c.get_bool("bias", true);
    const bool causal = c.get_bool("causal", false);
    return mha_parity_layer(std::make_shared<MultiheadAttention>(c.get_int("embed_dim", 8),
                                                                 c.get_int("num_heads", 2), gen, o),
                            causal);
  };
  add.gradcheck_configs = {
      {"self", {{"embed_dim", "4"}, {"num_heads", "2"}}},
      {"self_causal_nobias",
       {{"embed_dim", "4"}, {"num_heads", "2"}, {"causal", "true"}, {"bias", "false"}}},
      {"cross_padded", {{"embed_dim", "6"}, {"num_heads", "3"}, {"cross", "true"}}},
      {"masked", {{"embed_dim", "4"}, {"num_heads", "1"}, {"attn_mask", "true"}}},
  };
  add.make_inputs = mha_parity_inputs;  // as the mha row: cross and attn_mask keys
  rows.push_back(std::move(add));
  return rows;
}

}  // namespace attn::nn
