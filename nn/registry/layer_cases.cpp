#include "nn/registry/layer_cases.h"

#include <set>

#include "autograd/error.h"
#include "autograd/tape.h"

namespace attn::nn {

std::vector<Var> module_leaves(const Module& module, const std::vector<Var>& inputs) {
  std::vector<Var> leaves = module.parameters();
  leaves.insert(leaves.end(), inputs.begin(), inputs.end());
  return leaves;
}

void perturb_parameters(const Module& module, Generator& gen, double scale) {
  for (Var& p : module.parameters()) {
    Tensor& v = p.value();
    for (int64_t i = 0; i < v.numel(); ++i) v[i] += static_cast<real>(scale * gen.normal());
  }
}

LayerCase layer_case_from_spec(const ParityLayerSpec& spec,
                               const std::string& suffix,
                               const ConfigMap& config) {
  return {spec.name + "/" + suffix, [spec, config](Generator& gen) {
            LayerConfig cfg(config);
            ParityLayer layer = spec.build(cfg, gen);
            auto inputs = std::make_shared<LayerInputs>(spec.make_inputs(cfg, gen));
            cfg.check_all_used(spec.name);
            layer.module->eval();  // dropout off, as in the parity runs
            perturb_parameters(*layer.module, gen);
            {
              NoGrad off;  // a first call creates the input Vars
              layer.forward(*inputs);
            }
            std::vector<Var> in;
            for (const auto& [name, v] : inputs->differentiable()) in.push_back(v);
            LayerInstance out;
            out.leaves = module_leaves(*layer.module, in);
            out.forward = [layer, inputs] { return layer.forward(*inputs); };
            out.keep_alive = layer.module;
            return out;
          }};
}

const std::vector<LayerCase>& layer_cases() {
  static const std::vector<LayerCase> all = [] {
    std::vector<LayerCase> rows;
    for (const ParityLayerSpec& spec : parity_layers())
      for (const auto& [suffix, config] : spec.gradcheck_configs)
        rows.push_back(layer_case_from_spec(spec, suffix, config));
    // One line per helper's table of rows without a parity twin.
    for (LayerCase& c : core_layer_cases()) rows.push_back(std::move(c));
    for (LayerCase& c : rnn_layer_cases()) rows.push_back(std::move(c));
    for (LayerCase& c : variant_layer_cases()) rows.push_back(std::move(c));
    for (LayerCase& c : position_layer_cases()) rows.push_back(std::move(c));
    for (LayerCase& c : softmax_head_layer_cases()) rows.push_back(std::move(c));
    for (LayerCase& c : zoo_layer_cases()) rows.push_back(std::move(c));
    for (LayerCase& c : titans_layer_cases()) rows.push_back(std::move(c));
    for (LayerCase& c : finetune_layer_cases()) rows.push_back(std::move(c));
    std::set<std::string> seen;
    for (const LayerCase& c : rows)
      if (!seen.insert(c.name).second)
        throw Error("layer registry: duplicate row name '" + c.name + "'");
    return rows;
  }();
  return all;
}

}  // namespace attn::nn
