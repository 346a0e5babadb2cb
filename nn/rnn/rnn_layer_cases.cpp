// Gradcheck rows (double precision, full Jacobian) for the recurrent layers and the recurrent
// seq2seq models: tests/gradcheck/layer_gradcheck.cpp runs every one.
//
// Each recurrent layer (rnn tanh and relu, gru, lstm) is checked with 1 and 2 layers, uni- and
// bidirectional, with and without a padded batch, always from given initial states and with
// output=all, so the Jacobian covers y, h_n and c_n with respect to x, h0, c0 and every weight.
// The seq2seq models (every attention kind, each cell) are checked on their logits with respect
// to every parameter, on a batch whose second source row is padded.
#include <fmt/format.h>

#include "nn/parity/parity_layers.h"
#include "nn/registry/layer_cases.h"
#include "nn/rnn/seq2seq.h"

namespace attn::nn {

namespace {

ConfigMap with(ConfigMap base, const ConfigMap& extra) {
  for (const auto& [k, v] : extra) base[k] = v;
  return base;
}

LayerCase seq2seq_case(RecurrentMode cell, Seq2SeqAttention attention, int64_t layers) {
  const std::string name =
      fmt::format("rnn_seq2seq/{}_{}{}", recurrent_mode_name(cell),
                  seq2seq_attention_name(attention), layers > 1 ? "_2layer" : "");
  return {name, [=](Generator& gen) {
            RnnSeq2SeqConfig c;
            c.cell = cell;
            c.attention = attention;
            c.src_vocab = c.tgt_vocab = 5;
            c.embed_dim = c.hidden_size = 2;
            c.num_layers = layers;
            auto m = std::make_shared<RnnSeq2Seq>(c, gen);
            perturb_parameters(*m, gen);
            // pad_id 0 ends source row 1; the targets hold no padding (the decoder would read a
            // padding embedding, which PyTorch's padding_idx keeps out of the gradient).
            const Tensor src = Tensor::from_vector({2, 3}, {3, 4, 2, 2, 3, 0});
            const Tensor tgt_in = Tensor::from_vector({2, 3}, {1, 3, 4, 1, 2, 2});
            LayerInstance out;
            out.keep_alive = m;
            out.leaves = m->parameters();
            out.forward = [m, src, tgt_in] { return m->forward(src, tgt_in).logits; };
            return out;
          }};
}

}  // namespace

std::vector<LayerCase> rnn_layer_cases() {
  std::vector<LayerCase> rows;
  const ConfigMap tiny{{"input_size", "2"}, {"hidden_size", "2"}, {"output", "all"}};
  for (const ParityLayerSpec& spec : rnn_parity_layers()) {
    // The same layer on a padded batch: row 1 holds 1 of the 3 steps.
    ParityLayerSpec padded = spec;
    padded.make_inputs = [base = spec.make_inputs](LayerConfig& c, Generator& gen) {
      TensorMap in = base(c, gen);
      in["lengths"] = Tensor::from_vector({3, 1});
      return in;
    };
    rows.push_back(layer_case_from_spec(spec, "1layer", tiny));
    rows.push_back(layer_case_from_spec(
        spec, "2layer_bidir", with(tiny, {{"num_layers", "2"}, {"bidirectional", "true"}})));
    rows.push_back(
        layer_case_from_spec(padded, "padded_bidir", with(tiny, {{"bidirectional", "true"}})));
    rows.push_back(
        layer_case_from_spec(padded, "padded_2layer", with(tiny, {{"num_layers", "2"}})));
    if (spec.name == "rnn")
      rows.push_back(layer_case_from_spec(
          spec, "relu_bidir", with(tiny, {{"nonlinearity", "relu"}, {"bidirectional", "true"}})));
  }
  for (Seq2SeqAttention a : {Seq2SeqAttention::kNone, Seq2SeqAttention::kBahdanau,
                             Seq2SeqAttention::kLuongDot, Seq2SeqAttention::kLuongGeneral})
    rows.push_back(seq2seq_case(RecurrentMode::kLstm, a, 1));
  rows.push_back(seq2seq_case(RecurrentMode::kGru, Seq2SeqAttention::kBahdanau, 2));
  rows.push_back(seq2seq_case(RecurrentMode::kRnnTanh, Seq2SeqAttention::kLuongGeneral, 1));
  return rows;
}

}  // namespace attn::nn
