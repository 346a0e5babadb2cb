#include "train/optim/optimizer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "autograd/error.h"

namespace attn::train {

void require_hyper(
    bool ok, const std::string& optimizer, const char* field, double value, const char* rule) {
  if (!ok) throw Error(fmt::format("{}: {} must be {}, got {}", optimizer, field, rule, value));
}

Optimizer::Optimizer(std::vector<Var> params, double lr, std::string type_name)
    : params_(std::move(params)),
      state_(params_.size()),
      lr_(lr),
      type_name_(std::move(type_name)) {
  if (params_.empty()) throw Error(type_name_ + ": no parameters to optimize");
  for (size_t i = 0; i < params_.size(); ++i)
    if (!params_[i].requires_grad())
      throw Error(fmt::format(
          "{}: parameter {} ({}) does not require a gradient", type_name_, i,
          params_[i].name().empty() ? shape_str(params_[i].shape()) : params_[i].name()));
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  require_hyper(std::isfinite(lr) && lr >= 0.0, type_name_, "lr", lr, ">= 0");
  lr_ = lr;
}

void Optimizer::step() {
  for (size_t i = 0; i < params_.size(); ++i) {
    Var& p = params_[i];
    if (!p.has_grad()) continue;
    update(p.value(), p.grad(), state_[i]);
  }
  ++steps_;
}

void Optimizer::zero_grad() {
  for (Var& p : params_) p.zero_grad();
}

TensorMap Optimizer::state_dict() const {
  TensorMap out;
  for (size_t i = 0; i < state_.size(); ++i)
    for (const auto& [name, t] : state_[i]) out[fmt::format("{}.{}", i, name)] = t.clone();
  out["steps"] = Tensor::scalar(static_cast<real>(steps_));
  return out;
}

void Optimizer::load_state_dict(const TensorMap& state) {
  state_ = parse_state(state);
  steps_ = static_cast<int64_t>(state.at("steps").item());
}

void Optimizer::check_state_dict(const TensorMap& state) const {
  parse_state(state);
}

std::vector<std::map<std::string, Tensor>> Optimizer::parse_state(const TensorMap& state) const {
  const std::vector<std::string> allowed = buffer_names();
  std::vector<std::string> problems;
  std::vector<std::map<std::string, Tensor>> next(params_.size());
  std::set<size_t> faulty;  // parameters with a problem already listed
  for (const auto& [key, t] : state) {
    if (key == "steps") {
      if (t.numel() != 1 || t.item() < 0 || t.item() != std::floor(t.item()))
        problems.push_back("'steps' is not a non-negative whole number");
      continue;
    }
    const size_t dot = key.find('.');
    size_t index = 0;
    bool ok = dot != std::string::npos && dot > 0;
    for (size_t k = 0; ok && k < dot; ++k) ok = std::isdigit(static_cast<unsigned char>(key[k]));
    if (ok) index = std::stoul(key.substr(0, dot));
    const std::string buffer = ok ? key.substr(dot + 1) : "";
    if (!ok || index >= params_.size() ||
        std::find(allowed.begin(), allowed.end(), buffer) == allowed.end()) {
      problems.push_back(fmt::format("unexpected '{}'", key));
      continue;
    }
    const bool scalar = buffer == "step";
    const Shape& want = scalar ? Shape{} : params_[index].shape();
    if (t.shape() != want) {
      faulty.insert(index);
      problems.push_back(fmt::format("'{}' has shape {}, the parameter needs {}", key,
                                     shape_str(t.shape()), shape_str(want)));
      continue;
    }
    next[index][buffer] = t.clone();
  }
  if (!state.count("steps")) problems.push_back("missing 'steps'");
  // A parameter has either no state yet or every buffer (they are created together).
  for (size_t i = 0; i < next.size(); ++i)
    if (!next[i].empty() && next[i].size() != allowed.size() && !faulty.count(i))
      problems.push_back(fmt::format("parameter {} has {} of the {} buffers {}", i, next[i].size(),
                                     allowed.size(), fmt::join(allowed, ", ")));
  if (!problems.empty()) {
    std::string msg = fmt::format("{}: cannot load optimizer state ({} problem{}):", type_name_,
                                  problems.size(), problems.size() == 1 ? "" : "s");
    for (const auto& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
  return next;
}

}  // namespace attn::train
