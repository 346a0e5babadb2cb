// What a layer row reads: its configuration (key=value strings) and its named input tensors.
//
//   attn::nn::LayerConfig cfg({{"d_model", "8"}, {"norm_first", "true"}});
//   int64_t d = cfg.get_int("d_model", 512);          // 8; the default when the key is absent
//   bool pre = cfg.get_bool("norm_first", false);      // true / false / 1 / 0
//   cfg.check_all_used("encoder_layer");               // a key nobody read -> UsageError
//
//   attn::nn::LayerInputs in(tensors);                 // e.g. from an inputs.safetensors
//   attn::Var x = in.input("x");                       // float, differentiable (grad.x)
//   std::optional<attn::Tensor> m = in.optional_mask("src_key_padding_mask");
//
// Both throw attn::UsageError naming the key or tensor at fault: these are the errors a
// student makes on the command line (`attnlab parity` exits with code 2 on them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autograd/error.h"
#include "autograd/safetensors.h"
#include "autograd/var.h"

namespace attn::nn {

using ConfigMap = std::map<std::string, std::string>;

class LayerConfig {
 public:
  explicit LayerConfig(ConfigMap values = {}) : values_(std::move(values)) {}

  int64_t get_int(const std::string& key, int64_t fallback);
  double get_double(const std::string& key, double fallback);
  bool get_bool(const std::string& key, bool fallback);
  // One of `choices`; anything else is a UsageError listing them.
  std::string get_choice(const std::string& key,
                         const std::string& fallback,
                         const std::vector<std::string>& choices);
  bool has(const std::string& key) const { return values_.count(key) > 0; }

  // Throws UsageError if a key was given that no get_*() asked for (a typo, or a key this layer
  // does not have), listing the keys that were read.
  void check_all_used(const std::string& layer) const;

 private:
  const std::string* find(const std::string& key);
  ConfigMap values_;
  std::set<std::string> used_;
};

class LayerInputs {
 public:
  explicit LayerInputs(TensorMap tensors) : tensors_(std::move(tensors)) {}

  // A float input the layer is differentiated with respect to. The Var is made on the first
  // call (requiring a gradient) and the same Var is returned afterwards, so a forward closure
  // can be rerun on it (the gradcheck perturbs its value in place).
  Var input(const std::string& name);
  // A 0/1 mask (bool in safetensors), or token ids: plain tensors, no gradient.
  Tensor mask(const std::string& name) const { return tensor(name); }
  std::optional<Tensor> optional_mask(const std::string& name) const;
  Tensor indices(const std::string& name) const { return tensor(name); }
  bool has(const std::string& name) const { return tensors_.count(name) > 0; }

  // The float inputs made so far, in the order of their first use.
  const std::vector<std::pair<std::string, Var>>& differentiable() const { return vars_; }
  // Tensors nobody read (a misspelt mask name would otherwise be ignored silently).
  std::vector<std::string> unused() const;

 private:
  Tensor tensor(const std::string& name) const;
  TensorMap tensors_;
  std::vector<std::pair<std::string, Var>> vars_;
  mutable std::set<std::string> read_;
};

}  // namespace attn::nn
