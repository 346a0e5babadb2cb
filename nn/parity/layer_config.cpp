#include "nn/parity/layer_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "autograd/error.h"

namespace attn::nn {

const std::string* LayerConfig::find(const std::string& key) {
  used_.insert(key);
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

int64_t LayerConfig::get_int(const std::string& key, int64_t fallback) {
  const std::string* s = find(key);
  if (!s) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(s->c_str(), &end, 10);
  if (s->empty() || *end != '\0')
    throw UsageError(fmt::format("config {}={}: expected a whole number", key, *s));
  return v;
}

double LayerConfig::get_double(const std::string& key, double fallback) {
  const std::string* s = find(key);
  if (!s) return fallback;
  char* end = nullptr;
  const double v = std::strtod(s->c_str(), &end);
  if (s->empty() || *end != '\0')
    throw UsageError(fmt::format("config {}={}: expected a number", key, *s));
  return v;
}

bool LayerConfig::get_bool(const std::string& key, bool fallback) {
  const std::string* s = find(key);
  if (!s) return fallback;
  if (*s == "true" || *s == "True" || *s == "1") return true;
  if (*s == "false" || *s == "False" || *s == "0") return false;
  throw UsageError(fmt::format("config {}={}: expected true or false", key, *s));
}

std::string LayerConfig::get_choice(const std::string& key,
                                    const std::string& fallback,
                                    const std::vector<std::string>& choices) {
  const std::string* s = find(key);
  if (!s) return fallback;
  if (std::find(choices.begin(), choices.end(), *s) == choices.end())
    throw UsageError(
        fmt::format("config {}={}: expected one of {}", key, *s, fmt::join(choices, ", ")));
  return *s;
}

void LayerConfig::check_all_used(const std::string& layer) const {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : values_)
    if (!used_.count(key)) unknown.push_back(key);
  if (!unknown.empty())
    throw UsageError(fmt::format("{}: unknown config key{} {} (this layer reads: {})", layer,
                                 unknown.size() == 1 ? "" : "s", fmt::join(unknown, ", "),
                                 fmt::join(used_, ", ")));
}

Tensor LayerInputs::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    std::vector<std::string> present;
    for (const auto& [n, t] : tensors_) present.push_back(n);
    throw UsageError(fmt::format("missing input tensor '{}' (the inputs hold: {})", name,
                                 fmt::join(present, ", ")));
  }
  read_.insert(name);
  return it->second;
}

std::optional<Tensor> LayerInputs::optional_mask(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  return tensor(name);
}

std::vector<std::string> LayerInputs::unused() const {
  std::vector<std::string> out;
  for (const auto& [name, t] : tensors_)
    if (!read_.count(name)) out.push_back(name);
  return out;
}

Var LayerInputs::input(const std::string& name) {
  for (const auto& [n, v] : vars_)
    if (n == name) return v;
  Var v(tensor(name).clone(), true);
  v.set_name(name);
  vars_.emplace_back(name, v);
  return v;
}

}  // namespace attn::nn
