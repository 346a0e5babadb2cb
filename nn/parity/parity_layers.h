// The layer table: one row per layer family, shared by `attnlab parity` and the gradcheck sweep.
//
//   for (const attn::nn::ParityLayerSpec& s : attn::nn::parity_layers()) ...
//   const attn::nn::ParityLayerSpec& s = attn::nn::find_parity_layer("encoder_layer");
//   attn::nn::LayerConfig cfg({{"d_model", "8"}, {"nhead", "2"}});
//   attn::Generator gen(0);
//   attn::nn::ParityLayer layer = s.build(cfg, gen);       // the module + its forward
//   attn::nn::LayerInputs in(tensors);                     // x, memory, masks ...
//   attn::Var y = layer.forward(in);
//
// One row gives a layer two proofs without a new test file:
//   - PyTorch parity: `attnlab parity <name> --config k=v ... --weights W --inputs I --out O`
//     builds the layer from the config, loads a PyTorch state_dict, runs forward and backward
//     (see nn/parity/run_layer_parity.h); tests/parity/check_layers.py compares with PyTorch.
//   - gradcheck: every entry of `gradcheck_configs` becomes a row of nn/registry/layer_cases.h,
//     checked in double precision by tests/gradcheck/layer_gradcheck.cpp on `make_inputs`.
//
// Config keys and their defaults follow the PyTorch twin (d_model, nhead, dim_feedforward,
// norm_first, activation, ...). batch_first is always true.
//
// Each helper adds its layers through ONE table function declared below and ONE line in
// nn/parity/parity_layers.cpp calling it:
//   core_parity_layers()    nn-core:     linear, embedding, layer_norm, rms_norm, feedforward,
//                                        mha, encoder_layer, decoder_layer, transformer
//   (nn-variants and rnn: declare your table function here, next to core_parity_layers)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/generator.h"
#include "nn/module.h"
#include "nn/parity/layer_config.h"

namespace attn::nn {

struct ParityLayer {
  std::shared_ptr<Module> module;            // its named_parameters() are the checked weights
  std::function<Var(LayerInputs&)> forward;  // reads its inputs by name, returns y
  std::function<TensorMap()> extra_outputs;  // optional: more tensors to write (e.g. weights)
};

struct ParityLayerSpec {
  std::string name;     // the <layer> of `attnlab parity <layer>`
  std::string summary;  // one line: what it is and its config keys with defaults
  // Builds the layer; reads its keys from the config. gen initialises the weights (a parity
  // run overwrites them with the loaded state dict).
  std::function<ParityLayer(LayerConfig&, Generator&)> build;
  // Small configurations for the double-precision gradcheck (row name suffix, config) ...
  std::vector<std::pair<std::string, ConfigMap>> gradcheck_configs;
  // ... and the inputs for one of them (floats from gen; masks, ids as the layer expects). It may
  // read extra keys that only shape these inputs (e.g. cross=true for a memory); such keys appear
  // only in gradcheck_configs, never on a parity command line.
  std::function<TensorMap(LayerConfig&, Generator&)> make_inputs;
};

std::vector<ParityLayerSpec> core_parity_layers();
std::vector<ParityLayerSpec> variant_parity_layers();   // nn-variants: variant_parity_layers.cpp
std::vector<ParityLayerSpec> rnn_parity_layers();       // rnn: nn/rnn/rnn_parity_layers.cpp
std::vector<ParityLayerSpec> position_parity_layers();  // positions: position_parity_layers.cpp
std::vector<ParityLayerSpec> additive_parity_layers();  // additive: additive_parity_layers.cpp
std::vector<ParityLayerSpec> zoo_parity_layers();       // attention-zoo: zoo_parity_layers.cpp
std::vector<ParityLayerSpec> vision_parity_layers();    // vision: vision_parity_layers.cpp
std::vector<ParityLayerSpec> ssm_parity_layers();       // s6: ssm_parity_layers.cpp
// zoo2: zoo_recurrent_parity_layers.cpp (lightning attention, Titans memory as context)
std::vector<ParityLayerSpec> zoo_recurrent_parity_layers();
std::vector<ParityLayerSpec> softmax_head_parity_layers();  // softmax_head_parity_layers.cpp

// Every row, in a stable order; names are unique.
const std::vector<ParityLayerSpec>& parity_layers();
// The row called `name`, or a UsageError listing the known names.
const ParityLayerSpec& find_parity_layer(const std::string& name);
// "name: summary" lines for a --help text.
std::string parity_layers_help();

}  // namespace attn::nn
