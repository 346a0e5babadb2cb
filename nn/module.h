// Module: the base of every layer, PyTorch-style.
//
//   class TwoLayer : public attn::nn::Module {
//    public:
//     TwoLayer(Generator& gen) : Module("TwoLayer") {
//       fc1 = register_module("fc1", std::make_shared<Linear>(4, 8, true, gen));
//       scale = register_parameter("scale", Tensor::ones({8}));
//     }
//     Var forward(const Var& x) { return mul(relu(fc1->forward(x)), scale); }
//     std::shared_ptr<Linear> fc1;
//     Var scale;
//   };
//
//   model.named_parameters();    // {"fc1.weight", ...}, {"fc1.bias", ...}, {"scale", ...}
//   model.save("m.safetensors"); model.load("m.safetensors");  // strict: names and shapes
//   model.train(); model.eval(); model.zero_grad();
//
// A registered parameter is a Var; the member and the registry share one Node, so loading a
// state dict (which copies into the value in place) is seen through the member too. Names,
// layouts and initialisations follow PyTorch, so a PyTorch state_dict saved as safetensors
// loads directly (docs/checkpoint-format.md lists the names of layers without a twin).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/safetensors.h"
#include "autograd/var.h"

namespace attn::nn {

class Module {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& type_name() const { return type_name_; }

  // ---- registration (in the constructor of a derived layer) ----
  Var register_parameter(const std::string& name, Tensor init);
  // Non-learned state saved with the module (e.g. a fixed positional table).
  Tensor register_buffer(const std::string& name, Tensor value);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // ---- traversal; names are dotted paths, in registration order ----
  std::vector<Var> parameters() const;
  std::vector<std::pair<std::string, Var>> named_parameters() const;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const {
    return children_;
  }
  int64_t num_parameters() const;

  // ---- modes and gradients ----
  void train(bool on = true);  // recursively; dropout is active only in training mode
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();

  // ---- state ----
  TensorMap state_dict() const;  // parameters and buffers by dotted name
  // Copies values in place. Rejects (naming them all) unknown names, missing names and shape
  // mismatches before changing anything.
  void load_state_dict(const TensorMap& state);
  void save(const std::string& path) const;  // safetensors, atomic
  void load(const std::string& path);

  // An indented tree like PyTorch's print(model), with parameter shapes.
  std::string to_string() const;

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  void collect_parameters(const std::string& prefix,
                          std::vector<std::pair<std::string, Var>>& out) const;
  void collect_buffers(const std::string& prefix,
                       std::vector<std::pair<std::string, Tensor>>& out) const;
  void append_tree(const std::string& name, int depth, std::string& out) const;

  std::string type_name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Var>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

}  // namespace attn::nn
