// The layer registry for the double-precision gradcheck sweep
// (tests/gradcheck/layer_gradcheck.cpp).
//
//   for (const attn::nn::LayerCase& c : attn::nn::layer_cases()) {
//     attn::Generator gen(1234);
//     attn::nn::LayerInstance layer = c.build(gen);
//     attn::gradcheck(layer.leaves, layer.forward);     // full Jacobian, every leaf
//   }
//
// A row builds a tiny layer (d_model 4-8, T 3, 2 heads) and returns its leaves — every
// parameter and every float input — with a closure recomputing the output from them.
//
// Where the rows come from:
//   - every ParityLayerSpec (nn/parity/parity_layers.h) with gradcheck_configs gives one row per
//     config, named "<layer>/<suffix>", with its parameters perturbed so no weight sits at an
//     exact 1 or 0 (which could hide a wrong gradient);
//   - tables of rows that have no parity twin, one function per helper, each called on ONE line
//     of nn/registry/layer_cases.cpp:
//       core_layer_cases()    nn-core: sdpa variants, dropout (training), the stacks
//       (nn-variants and rnn: declare your table function here, next to core_layer_cases)
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "nn/module.h"
#include "nn/parity/parity_layers.h"

namespace attn::nn {

struct LayerInstance {
  std::shared_ptr<void> keep_alive;  // the module and whatever the closure refers to
  std::vector<Var> leaves;           // parameters and float inputs, all requiring a gradient
  std::function<Var()> forward;      // recomputes the output from the current leaf values
};

struct LayerCase {
  std::string name;
  std::function<LayerInstance(Generator&)> build;
};

// A row made from a layer-table entry and one of its configs (what layer_cases() does for
// every gradcheck_configs entry).
LayerCase layer_case_from_spec(const ParityLayerSpec& spec,
                               const std::string& suffix,
                               const ConfigMap& config);
// Leaves of a module: its parameters followed by the given inputs.
std::vector<Var> module_leaves(const Module& module, const std::vector<Var>& inputs);
// Adds N(0, scale^2) noise to every parameter (so none is exactly 0 or 1).
void perturb_parameters(const Module& module, Generator& gen, double scale = 0.1);

// A row for a model over token ids: every parameter is a leaf, eval mode, perturbed weights.
// run(model) -> the output Var.
template <class Model, class Options, class Forward>
LayerCase model_case(const std::string& name, Options o, Forward run) {
  return {name, [o, run](Generator& gen) {
            auto m = std::make_shared<Model>(o, gen);
            m->eval();
            perturb_parameters(*m, gen);
            LayerInstance out;
            out.keep_alive = m;
            out.leaves = m->parameters();
            out.forward = [m, run] { return run(*m); };
            return out;
          }};
}

std::vector<LayerCase> core_layer_cases();
std::vector<LayerCase> variant_layer_cases();       // nn-variants: variant_layer_cases.cpp
std::vector<LayerCase> rnn_layer_cases();           // rnn: nn/rnn/rnn_layer_cases.cpp
std::vector<LayerCase> position_layer_cases();      // positions: position_layer_cases.cpp
std::vector<LayerCase> softmax_head_layer_cases();  // softmax heads: softmax_head_cases.cpp
std::vector<LayerCase> zoo_layer_cases();           // linear-zoo's layers: zoo_layer_cases.cpp
std::vector<LayerCase> titans_layer_cases();        // Titans: titans_layer_cases.cpp
std::vector<LayerCase> finetune_layer_cases();      // SVF and LoRA: finetune_layer_cases.cpp

// Every row, in a stable order; names are unique.
const std::vector<LayerCase>& layer_cases();

}  // namespace attn::nn
