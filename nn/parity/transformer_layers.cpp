// Layer-table rows for the transformer blocks: feedforward, encoder_layer, decoder_layer,
// transformer.
//
// encoder_layer (nn.TransformerEncoderLayer): input x (B,T,d); optional src_mask (T,T) and
// src_key_padding_mask (B,T). decoder_layer (nn.TransformerDecoderLayer): inputs x = tgt
// (B,T,d) and memory (B,S,d); optional tgt_mask, memory_mask, tgt_key_padding_mask,
// memory_key_padding_mask. transformer (nn.Transformer): inputs src (B,S,d) and tgt (B,T,d)
// (grad.src, grad.tgt) with any of PyTorch's six masks under PyTorch's names.
// Masks: 1 = not allowed. causal=true adds a causal (tgt_)mask.
#include "nn/feedforward.h"
#include "nn/parity/table_helpers.h"
#include "nn/transformer/decoder_layer.h"
#include "nn/transformer/encoder_layer.h"
#include "nn/transformer/transformer.h"

namespace attn::nn {

namespace {

constexpr const char* kLayerKeys =
    "d_model=8 nhead=2 dim_feedforward=16 dropout=0.1 (off: eval) activation=relu|gelu|gelu_tanh "
    "layer_norm_eps=1e-5 norm_first=false bias=true n_kv_heads=nhead causal=false; ablation "
    "switches (no PyTorch twin when off) layer_norm=true residual=true feedforward=true";

}  // namespace

TransformerLayerOptions read_layer_options(LayerConfig& c) {
  TransformerLayerOptions o;
  o.d_model = c.get_int("d_model", 8);
  o.nhead = c.get_int("nhead", 2);
  o.dim_feedforward = c.get_int("dim_feedforward", 16);
  o.dropout = c.get_double("dropout", 0.1);
  o.activation =
      activation_from_name(c.get_choice("activation", "relu", {"relu", "gelu", "gelu_tanh"}));
  o.layer_norm_eps = c.get_double("layer_norm_eps", 1e-5);
  o.norm_first = c.get_bool("norm_first", false);
  o.bias = c.get_bool("bias", true);
  o.n_kv_heads = c.get_int("n_kv_heads", 0);
  o.layer_norm = c.get_bool("layer_norm", true);
  o.residual = c.get_bool("residual", true);
  o.feedforward = c.get_bool("feedforward", true);
  return o;
}

std::vector<ParityLayerSpec> transformer_parity_layers() {
  std::vector<ParityLayerSpec> rows;

  // A parity run is in eval mode, so dropout never fires; a dropout generator still exists so
  // a dropout > 0 config builds exactly as in training.
  auto rng = [] { return std::make_shared<Generator>(0); };

  ParityLayerSpec ff;
  ff.name = "feedforward";
  ff.summary =
      "FeedForward: d_model=8 dim_feedforward=16 activation=relu|gelu|gelu_tanh|swiglu bias=true; "
      "input x (no PyTorch twin: relu/gelu as linear2(act(linear1 x)), swiglu as w2(silu(w1 x) * "
      "w3 x))";
  ff.build = [](LayerConfig& c, Generator& gen) {
    auto m = std::make_shared<FeedForward>(
        c.get_int("d_model", 8), c.get_int("dim_feedforward", 16),
        activation_from_name(
            c.get_choice("activation", "relu", {"relu", "gelu", "gelu_tanh", "swiglu"})),
        gen, c.get_bool("bias", true));
    return ParityLayer{m, [m](LayerInputs& in) { return m->forward(in.input("x")); }};
  };
  ff.gradcheck_configs = {
      {"relu", {{"d_model", "4"}, {"dim_feedforward", "8"}}},
      {"gelu", {{"d_model", "4"}, {"dim_feedforward", "8"}, {"activation", "gelu"}}},
      {"gelu_tanh", {{"d_model", "4"}, {"dim_feedforward", "8"}, {"activation", "gelu_tanh"}}},
      {"swiglu",
       {{"d_model", "4"}, {"dim_feedforward", "6"}, {"activation", "swiglu"}, {"bias", "false"}}},
  };
  ff.make_inputs = [](LayerConfig& c, Generator& gen) {
    return TensorMap{{"x", Tensor::randn({2, 3, c.get_int("d_model", 8)}, gen)}};
  };
  rows.push_back(std::move(ff));

  ParityLayerSpec enc;
  enc.name = "encoder_layer";
  enc.summary = std::string("nn.TransformerEncoderLayer (batch_first): ") + kLayerKeys +
                "; inputs x, optional src_mask, src_key_padding_mask";
  enc.build = [rng](LayerConfig& c, Generator& gen) {
    const TransformerLayerOptions o = read_layer_options(c);
    const bool causal = c.get_bool("causal", false);
    auto m = std::make_shared<TransformerEncoderLayer>(o, gen, rng());
    return ParityLayer{m, [m, causal](LayerInputs& in) {
                         AttentionMasks masks;
                         masks.attn_mask = in.optional_mask("src_mask");
                         masks.key_padding_mask = in.optional_mask("src_key_padding_mask");
                         masks.causal = causal;
                         return m->forward(in.input("x"), masks);
                       }};
  };
  const ConfigMap tiny{{"d_model", "4"}, {"nhead", "2"}, {"dim_feedforward", "8"}};
  auto with = [&](ConfigMap extra) {
    ConfigMap c = tiny;
    c.insert(extra.begin(), extra.end());
    return c;
  };
  enc.gradcheck_configs = {
      {"post_relu", tiny},
      {"pre_gelu_padded",
       with({{"norm_first", "true"}, {"activation", "gelu"}, {"masks", "true"}})},
      {"post_causal_gqa", with({{"causal", "true"}, {"n_kv_heads", "1"}})},
      // The ablation switches, one at a time (experiments/architectures/ablate_block.cpp).
      {"post_no_layer_norm", with({{"layer_norm", "false"}})},
      {"pre_no_residual", with({{"norm_first", "true"}, {"residual", "false"}})},
      {"post_no_residual", with({{"residual", "false"}})},
      {"post_no_feedforward", with({{"feedforward", "false"}})},
  };
  // masks=true (gradcheck only): a key padding mask hiding the last position of batch 1 and a
  // src_mask hiding key 0 from query 2.
  enc.make_inputs = [](LayerConfig& c, Generator& gen) {
    TensorMap in{{"x", Tensor::randn({2, 3, c.get_int("d_model", 8)}, gen)}};
    if (c.get_bool("masks", false)) {
      in["src_key_padding_mask"] = padding_mask({3, 2}, 3);
      Tensor m({3, 3});
      m.at({2, 0}) = 1;
      in["src_mask"] = m;
    }
    return in;
  };
  rows.push_back(std::move(enc));

  ParityLayerSpec dec;
  dec.name = "decoder_layer";
  dec.summary = std::string("nn.TransformerDecoderLayer (batch_first): ") + kLayerKeys +
                "; inputs x (tgt), memory, optional tgt_mask, memory_mask, tgt_key_padding_mask, "
                "memory_key_padding_mask";
  dec.build = [rng](LayerConfig& c, Generator& gen) {
    const TransformerLayerOptions o = read_layer_options(c);
    const bool causal = c.get_bool("causal", false);
    auto m = std::make_shared<TransformerDecoderLayer>(o, gen, rng());
    return ParityLayer{
        m, [m, causal](LayerInputs& in) {
          AttentionMasks self_masks, memory_masks;
          self_masks.attn_mask = in.optional_mask("tgt_mask");
          self_masks.key_padding_mask = in.optional_mask("tgt_key_padding_mask");
          self_masks.causal = causal;
          memory_masks.attn_mask = in.optional_mask("memory_mask");
          memory_masks.key_padding_mask = in.optional_mask("memory_key_padding_mask");
          return m->forward(in.input("x"), in.input("memory"), self_masks, memory_masks);
        }};
  };
  dec.gradcheck_configs = {
      {"post_relu_causal", with({{"causal", "true"}})},
      {"pre_gelu_padded",
       with({{"norm_first", "true"}, {"activation", "gelu"}, {"masks", "true"}})},
      {"pre_no_layer_norm", with({{"norm_first", "true"}, {"layer_norm", "false"}})},
      {"post_no_residual_causal", with({{"causal", "true"}, {"residual", "false"}})},
      {"pre_no_feedforward", with({{"norm_first", "true"}, {"feedforward", "false"}})},
  };
  // masks=true (gradcheck only): memory padding hides memory position 3 of batch 0.
  dec.make_inputs = [](LayerConfig& c, Generator& gen) {
    const int64_t d = c.get_int("d_model", 8);
    TensorMap in{{"x", Tensor::randn({2, 3, d}, gen)}, {"memory", Tensor::randn({2, 4, d}, gen)}};
    if (c.get_bool("masks", false)) in["memory_key_padding_mask"] = padding_mask({3, 4}, 4);
    return in;
  };
  rows.push_back(std::move(dec));

  ParityLayerSpec tr;
  tr.name = "transformer";
  tr.summary =
      std::string("nn.Transformer (batch_first): num_encoder_layers=2 num_decoder_layers=2 ") +
      kLayerKeys +
      "; inputs src, tgt, optional src_mask, tgt_mask, memory_mask, "
      "src_key_padding_mask, tgt_key_padding_mask, memory_key_padding_mask";
  tr.build = [rng](LayerConfig& c, Generator& gen) {
    TransformerOptions o;
    static_cast<TransformerLayerOptions&>(o) = read_layer_options(c);
    o.num_encoder_layers = c.get_int("num_encoder_layers", 2);
    o.num_decoder_layers = c.get_int("num_decoder_layers", 2);
    const bool causal = c.get_bool("causal", false);
    auto m = std::make_shared<Transformer>(o, gen, rng());
    return ParityLayer{m, [m, causal](LayerInputs& in) {
                         AttentionMasks src, tgt, mem;
                         src.attn_mask = in.optional_mask("src_mask");
                         src.key_padding_mask = in.optional_mask("src_key_padding_mask");
                         tgt.attn_mask = in.optional_mask("tgt_mask");
                         tgt.key_padding_mask = in.optional_mask("tgt_key_padding_mask");
                         tgt.causal = causal;
                         mem.attn_mask = in.optional_mask("memory_mask");
                         mem.key_padding_mask = in.optional_mask("memory_key_padding_mask");
                         return m->forward(in.input("src"), in.input("tgt"), src, tgt, mem);
                       }};
  };
  tr.gradcheck_configs = {
      {"post_1x1_causal_padded", with({{"num_encoder_layers", "1"},
                                       {"num_decoder_layers", "1"},
                                       {"causal", "true"},
                                       {"masks", "true"}})},
      {"pre_1x1_gelu", with({{"num_encoder_layers", "1"},
                             {"num_decoder_layers", "1"},
                             {"norm_first", "true"},
                             {"activation", "gelu"}})},
  };
  // masks=true (gradcheck only): source padding hides source position 3 of batch 1, in the
  // encoder and in the cross-attention.
  tr.make_inputs = [](LayerConfig& c, Generator& gen) {
    const int64_t d = c.get_int("d_model", 8);
    TensorMap in{{"src", Tensor::randn({2, 4, d}, gen)}, {"tgt", Tensor::randn({2, 3, d}, gen)}};
    if (c.get_bool("masks", false)) {
      in["src_key_padding_mask"] = padding_mask({4, 3}, 4);
      in["memory_key_padding_mask"] = padding_mask({4, 3}, 4);
    }
    return in;
  };
  rows.push_back(std::move(tr));
  return rows;
}

}  // namespace attn::nn
