#include "nn/module.h"

#include <fmt/format.h>

#include <set>

#include "autograd/error.h"

namespace attn::nn {

namespace {
void check_name(const std::string& name, const std::string& owner) {
  if (name.empty() || name.find('.') != std::string::npos)
    throw Error(fmt::format("{}: invalid member name '{}' (non-empty, no dots)", owner, name));
}
}  // namespace

Var Module::register_parameter(const std::string& name, Tensor init) {
  check_name(name, type_name_);
  Var v = Var::parameter(std::move(init), name);
  params_.emplace_back(name, v);
  return v;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  check_name(name, type_name_);
  buffers_.emplace_back(name, value);
  return value;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name(name, type_name_);
  if (!module) throw Error(fmt::format("{}: submodule '{}' is null", type_name_, name));
  module->train(training_);
  children_.emplace_back(name, std::move(module));
}

void Module::collect_parameters(const std::string& prefix,
                                std::vector<std::pair<std::string, Var>>& out) const {
  for (const auto& [name, v] : params_) out.emplace_back(prefix + name, v);
  for (const auto& [name, child] : children_) child->collect_parameters(prefix + name + ".", out);
}

void Module::collect_buffers(const std::string& prefix,
                             std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, t] : buffers_) out.emplace_back(prefix + name, t);
  for (const auto& [name, child] : children_) child->collect_buffers(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Var>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Var>> out;
  collect_parameters("", out);
  return out;
}

std::vector<Var> Module::parameters() const {
  std::vector<Var> out;
  for (auto& [name, v] : named_parameters()) out.push_back(v);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect_buffers("", out);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Var& v : parameters()) n += v.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (Var& v : parameters()) v.zero_grad();
}

TensorMap Module::state_dict() const {
  TensorMap state;
  for (const auto& [name, v] : named_parameters()) state.emplace(name, v.value());
  for (const auto& [name, t] : named_buffers()) state.emplace(name, t);
  return state;
}

void Module::load_state_dict(const TensorMap& state) {
  std::vector<std::pair<std::string, Tensor>> targets;
  for (auto& [name, v] : named_parameters()) targets.emplace_back(name, v.value());
  for (auto& entry : named_buffers()) targets.push_back(entry);

  std::vector<std::string> problems;
  std::set<std::string> known;
  for (const auto& [name, target] : targets) {
    known.insert(name);
    auto it = state.find(name);
    if (it == state.end())
      problems.push_back(fmt::format("missing '{}' {}", name, shape_str(target.shape())));
    else if (it->second.shape() != target.shape())
      problems.push_back(fmt::format("'{}' has shape {} in the file but {} in the model", name,
                                     shape_str(it->second.shape()), shape_str(target.shape())));
  }
  for (const auto& [name, t] : state)
    if (!known.count(name)) problems.push_back(fmt::format("unexpected '{}'", name));
  if (!problems.empty()) {
    std::string msg = fmt::format("{}: cannot load state ({} problem{}):", type_name_,
                                  problems.size(), problems.size() == 1 ? "" : "s");
    for (const auto& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
  for (auto& [name, target] : targets) target.copy_from(state.at(name));
}

void Module::save(const std::string& path) const {
  save_safetensors(path, state_dict(), {{"format", "attnlab"}, {"module", type_name_}});
}

void Module::load(const std::string& path) {
  try {
    load_state_dict(load_safetensors(path).tensors);
  } catch (const Error& e) {
    throw Error(fmt::format("loading '{}': {}", path, e.what()));
  }
}

void Module::append_tree(const std::string& name, int depth, std::string& out) const {
  const std::string pad(2 * depth, ' ');
  out += fmt::format("{}{}{}(", pad, name.empty() ? "" : "(" + name + "): ", type_name_);
  if (params_.empty() && children_.empty()) {
    out += ")\n";
    return;
  }
  out += "\n";
  for (const auto& [pname, v] : params_)
    out += fmt::format("{}  {}: {}\n", pad, pname, shape_str(v.shape()));
  for (const auto& [cname, child] : children_) child->append_tree(cname, depth + 1, out);
  out += pad + ")\n";
}

std::string Module::to_string() const {
  std::string out;
  append_tree("", 0, out);
  return out;
}

}  // namespace attn::nn
