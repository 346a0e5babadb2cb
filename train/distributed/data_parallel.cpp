#include "train/distributed/data_parallel.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "autograd/error.h"

namespace attn::train::distributed {

namespace {

uint64_t fnv1a(const void* data, size_t n, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

Slice rank_slice(int64_t n, int rank, int size) {
  return {n * rank / size, n * (rank + 1) / size};
}

GradientSync::GradientSync(Communicator& comm, std::vector<Var> params)
    : comm_(comm), params_(std::move(params)) {
  size_t total = 0;
  for (const Var& p : params_) total += static_cast<size_t>(p.numel());
  flat_.resize(total + params_.size() + 1);
}

GlobalLoss GradientSync::sum(double loss, int64_t tokens, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  // T first: the weights T_r / T need it before anything is packed. Integers below 2^53 add
  // exactly in doubles, so T is the same on every rank whatever the order.
  double total[1] = {static_cast<double>(tokens)};
  comm_.sum_in_rank_order(total, what + " (token count)");
  if (!(total[0] > 0)) throw Error(fmt::format("{}: the global batch has no scored tokens", what));
  const auto weight = static_cast<float>(static_cast<double>(tokens) / total[0]);

  // Pack w_r g_r, the flags and w_r L_r into one buffer; one ordered sum makes all of them.
  float* g = flat_.data();
  float* flags = g + (flat_.size() - params_.size() - 1);
  for (size_t i = 0; i < params_.size(); ++i) {
    const Var& p = params_[i];
    const auto n = static_cast<size_t>(p.numel());
    if (p.has_grad()) {
      const float* src = p.grad().data();
      for (size_t k = 0; k < n; ++k) g[k] = weight * src[k];
    } else {
      std::fill(g, g + n, 0.0f);
    }
    flags[i] = p.has_grad() ? 1.0f : 0.0f;
    g += n;
  }
  flat_.back() = weight * static_cast<float>(loss);
  comm_.sum_in_rank_order(flat_, what + " (gradients)");

  g = flat_.data();
  for (size_t i = 0; i < params_.size(); ++i) {
    Var& p = params_[i];
    const auto n = static_cast<size_t>(p.numel());
    if (flags[i] > 0) std::memcpy(p.node().own_grad().data(), g, n * sizeof(float));
    g += n;
  }
  comm_seconds_ += seconds_since(t0);
  return {flat_.back(), static_cast<int64_t>(total[0])};
}

void all_or_none(Communicator& comm, const std::string& what, const std::function<void()>& fn) {
  nlohmann::json status{{"ok", true}};
  try {
    fn();
  } catch (const UsageError& e) {
    status = {{"ok", false}, {"usage", true}, {"message", e.what()}};
  } catch (const Error& e) {
    status = {{"ok", false}, {"usage", false}, {"message", e.what()}};
  }
  if (comm.size() == 1) {  // alone: the error as it was, no rank numbers
    if (status["ok"]) return;
    if (status["usage"]) throw UsageError(status["message"].get<std::string>());
    throw Error(status["message"].get<std::string>());
  }
  const std::vector<std::string> all = comm.all_gather(status.dump(), what);
  std::vector<std::string> failures;
  bool all_usage = true;
  std::string first_message;
  bool same_message = true;
  for (size_t r = 0; r < all.size(); ++r) {
    const nlohmann::json s = nlohmann::json::parse(all[r]);
    if (s["ok"]) continue;
    const std::string message = s["message"];
    if (failures.empty()) first_message = message;
    same_message = same_message && message == first_message;
    all_usage = all_usage && s["usage"].get<bool>();
    failures.push_back(fmt::format("rank {}: {}", r, message));
  }
  if (failures.empty()) return;
  note_agreed_failure();
  const std::string text =
      failures.size() == all.size() && same_message
          ? first_message + fmt::format(" (on all {} ranks)", all.size())
          : fmt::format("{} of {} ranks failed during {}:\n  {}", failures.size(), all.size(), what,
                        fmt::join(failures, "\n  "));
  if (all_usage) throw UsageError(text);
  throw Error(text);
}

void require_same_options(Communicator& comm, const std::map<std::string, std::string>& options) {
  if (comm.size() == 1) return;
  const std::vector<std::string> all =
      comm.all_gather(nlohmann::json(options).dump(), "the start-up check of the options");
  const auto first = nlohmann::json::parse(all[0]).get<std::map<std::string, std::string>>();
  std::vector<std::string> diffs;
  for (size_t r = 1; r < all.size(); ++r) {
    const auto mine = nlohmann::json::parse(all[r]).get<std::map<std::string, std::string>>();
    for (const auto& [name, value] : first) {
      auto it = mine.find(name);
      const std::string other = it == mine.end() ? "(missing)" : it->second;
      if (other != value)
        diffs.push_back(fmt::format("rank {}: {} is {} but {} on rank 0", r, name, other, value));
    }
  }
  if (diffs.empty()) return;
  note_agreed_failure();
  throw UsageError(fmt::format(
      "the {} ranks were started with different options; data-parallel training needs the same "
      "command on every rank:\n  {}",
      all.size(), fmt::join(diffs, "\n  ")));
}

void separate_generators(const std::map<std::string, Generator*>& generators, int rank) {
  if (rank == 0) return;
  for (const auto& [name, gen] : generators) {
    const std::string state = gen->state() + "/" + name;
    const uint64_t seed =
        fnv1a(state.data(), state.size()) + static_cast<uint64_t>(rank) * 0x9E3779B97F4A7C15ull;
    gen->set_state(Generator(seed).state());
  }
}

void require_identical_weights(Communicator& comm, nn::Module& model, const std::string& when) {
  if (comm.size() == 1) return;
  uint64_t h = 1469598103934665603ull;
  for (const auto& [name, p] : model.named_parameters())
    h = fnv1a(p.value().data(), static_cast<size_t>(p.numel()) * sizeof(float), h);
  const std::vector<std::string> all =
      comm.all_gather(fmt::format("{:016x}", h), "the weight check " + when);
  std::vector<std::string> differ;
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0]) differ.push_back(std::to_string(r));
  if (differ.empty()) return;
  note_agreed_failure();
  throw Error(fmt::format(
      "the ranks' weights differ {} (rank 0 hash {}, different on rank {}): the ranks must step "
      "identically; this is a bug in the data-parallel code, please report it",
      when, all[0], fmt::join(differ, ", ")));
}

}  // namespace attn::train::distributed
