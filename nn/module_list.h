// ModuleList: numbered submodules, PyTorch's nn.ModuleList ("layers.0.", "layers.1.", ...).
//
//   auto layers = register_module("layers",
//   std::make_shared<ModuleList<TransformerEncoderLayer>>()); for (int i = 0; i < n; ++i)
//   layers->append(std::make_shared<TransformerEncoderLayer>(o, gen)); for (auto& layer : *layers)
//   x = layer->forward(x); named_parameters();   // "layers.0.self_attn.in_proj_weight", ...
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"

namespace attn::nn {

template <class M>
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}

  std::shared_ptr<M> append(std::shared_ptr<M> module) {
    add_child(std::to_string(items_.size()), module);
    items_.push_back(module);
    return module;
  }

  size_t size() const { return items_.size(); }
  M& operator[](size_t i) const { return *items_.at(i); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<M>> items_;
};

}  // namespace attn::nn
