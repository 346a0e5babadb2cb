#include "nn/parity/run_layer_parity.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/error.h"
#include "autograd/tape.h"
#include "nn/parity/parity_layers.h"

namespace attn::nn {

namespace {

SafetensorsFile load_input_file(const std::string& path, const char* flag) {
  try {
    return load_safetensors(path);
  } catch (const Error& e) {
    throw UsageError(fmt::format("{} {}: {}", flag, path, e.what()));
  }
}

}  // namespace

int run_layer_parity(const std::string& layer,
                     const std::map<std::string, std::string>& config,
                     const std::string& weights,
                     const std::string& inputs,
                     const std::string& out) {
  const ParityLayerSpec& spec = find_parity_layer(layer);
  LayerConfig cfg(config);
  Generator gen(0);
  // A constructor that rejects the settings (nhead not dividing d_model, ...) is a usage error too:
  // the command exits 2 and names the layer.
  ParityLayer built = [&] {
    try {
      return spec.build(cfg, gen);
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw UsageError(fmt::format("{} --config: {}", layer, e.what()));
    }
  }();
  cfg.check_all_used(layer);
  Module& module = *built.module;
  module.eval();

  try {
    module.load_state_dict(load_input_file(weights, "--weights").tensors);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(fmt::format("{} --weights {}: {}", layer, weights, e.what()));
  }
  TensorMap tensors = load_input_file(inputs, "--inputs").tensors;
  auto gy_it = tensors.find("gy");
  if (gy_it == tensors.end())
    throw UsageError(
        fmt::format("{} --inputs {}: missing the upstream gradient 'gy'", layer, inputs));
  const Tensor gy = gy_it->second;
  tensors.erase(gy_it);

  tape().clear();
  module.zero_grad();
  LayerInputs in(std::move(tensors));
  Var y;
  try {
    y = built.forward(in);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{} --inputs {}: {}", layer, inputs, e.what()));
  } catch (const Error& e) {
    throw UsageError(fmt::format("{}: the inputs do not fit the layer: {}", layer, e.what()));
  }
  if (const auto unused = in.unused(); !unused.empty())
    throw UsageError(fmt::format("{} --inputs {}: tensor{} {} not read by this layer", layer,
                                 inputs, unused.size() == 1 ? "" : "s", fmt::join(unused, ", ")));
  if (gy.shape() != y.shape())
    throw UsageError(fmt::format("{}: gy has shape {} but the output y is {}", layer,
                                 shape_str(gy.shape()), shape_str(y.shape())));
  if (y.requires_grad()) y.backward(gy);  // loss = sum(y * gy)  =>  dloss/dy = gy

  TensorMap result{{"y", y.value()}};
  auto grad_of = [](const Var& v) { return v.has_grad() ? v.grad() : Tensor::zeros(v.shape()); };
  for (const auto& [name, v] : in.differentiable()) result["grad." + name] = grad_of(v);
  for (const auto& [name, p] : module.named_parameters()) result["grad." + name] = grad_of(p);
  if (built.extra_outputs)
    for (auto& [name, t] : built.extra_outputs()) result[name] = t;
  save_safetensors(out, result, {{"format", "attnlab-parity"}, {"layer", layer}});
  return 0;
}

}  // namespace attn::nn
