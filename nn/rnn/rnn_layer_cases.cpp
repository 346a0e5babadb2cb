// Gradcheck rows (double precision, full Jacobian) for the recurrent layers and the recurrent
// seq2seq models: tests/gradcheck/layer_gradcheck.cpp runs every one.
//
// Each recurrent layer (rnn tanh and relu, gru, lstm) is checked with 1 and 2 layers, uni- and
// bidirectional, with and without a padded batch, always from given initial states and with
// output=all, so the Jacobian covers y, h_n and c_n with respect to x, h0, c0 and every weight.
#include "nn/parity/parity_layers.h"
#include "nn/registry/layer_cases.h"

namespace attn::nn {

namespace {

ConfigMap with(ConfigMap base, const ConfigMap& extra) {
  for (const auto& [k, v] : extra) base[k] = v;
  return base;
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
  return rows;
}

}  // namespace attn::nn
