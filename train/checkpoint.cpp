#include "train/checkpoint.h"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "autograd/error.h"

namespace attn::train {

namespace {

constexpr const char* kFormatKey = "attnlab.checkpoint";
constexpr const char* kFormatVersion = "1";
constexpr const char* kModelPrefix = "model.";
constexpr const char* kOptimPrefix = "optim.";

// FNV-1a, 64 bit: simple, and any changed byte changes the hash with near certainty.
class Fnv1a {
 public:
  void bytes(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h_ = (h_ ^ p[i]) * 1099511628211ULL;
  }
  void text(const std::string& s) {
    const uint64_t n = s.size();
    bytes(&n, sizeof n);
    bytes(s.data(), s.size());
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 14695981039346656037ULL;
};

std::string checksum(const TensorMap& tensors, const Metadata& metadata) {
  Fnv1a h;
  for (const auto& [name, t] : tensors) {
    h.text(name);
    h.text(shape_str(t.shape()));
    h.bytes(t.data(), static_cast<size_t>(t.numel()) * sizeof(real));
  }
  for (const auto& [k, v] : metadata)
    if (k != "checksum") {
      h.text(k);
      h.text(v);
    }
  return fmt::format("{:016x}", h.value());
}

TensorMap with_prefix(const std::string& prefix, const TensorMap& m) {
  TensorMap out;
  for (const auto& [k, v] : m) out.emplace(prefix + k, v);
  return out;
}

TensorMap strip_prefix(const std::string& prefix, const TensorMap& m) {
  TensorMap out;
  for (const auto& [k, v] : m)
    if (k.rfind(prefix, 0) == 0) out.emplace(k.substr(prefix.size()), v);
  return out;
}

// Model tensors against the model's own state dict: every problem, nothing changed.
void check_model(const nn::Module& model,
                 const TensorMap& saved,
                 std::vector<std::string>& problems) {
  const TensorMap want = model.state_dict();
  for (const auto& [name, t] : want) {
    auto it = saved.find(name);
    if (it == saved.end())
      problems.push_back(
          fmt::format("model tensor '{}' {} is missing", name, shape_str(t.shape())));
    else if (it->second.shape() != t.shape())
      problems.push_back(
          fmt::format("model tensor '{}' has shape {} in the file but {} in the model", name,
                      shape_str(it->second.shape()), shape_str(t.shape())));
  }
  for (const auto& [name, t] : saved)
    if (!want.count(name)) problems.push_back(fmt::format("unexpected model tensor '{}'", name));
}

}  // namespace

void save_checkpoint(const std::string& path,
                     const TrainingState& state,
                     int64_t step,
                     const Metadata& extra) {
  write_file_atomically(path, encode_checkpoint(state, step, extra));
}

std::string encode_checkpoint(const TrainingState& state, int64_t step, const Metadata& extra) {
  if (step < 0) throw Error(fmt::format("save_checkpoint: step must be >= 0, got {}", step));
  TensorMap tensors;
  Metadata meta{{kFormatKey, kFormatVersion}, {"step", std::to_string(step)}};
  if (state.model) tensors.merge(with_prefix(kModelPrefix, state.model->state_dict()));
  if (state.optimizer) {
    tensors.merge(with_prefix(kOptimPrefix, state.optimizer->state_dict()));
    meta["optim.type"] = state.optimizer->type_name();
    meta["optim.hyper"] = state.optimizer->describe();
  }
  for (const auto& [name, gen] : state.generators) meta["rng." + name] = gen->state();
  if (state.stream) meta["data.position"] = state.stream->position();
  for (const auto& [k, v] : extra) meta["extra." + k] = v;
  meta["checksum"] = checksum(tensors, meta);
  return encode_safetensors(tensors, meta, sizeof(real) == 4 ? SaveDtype::kF32 : SaveDtype::kF64);
}

SafetensorsFile read_checkpoint_file(const std::string& path) {
  SafetensorsFile f = load_safetensors(path);  // rejects truncated or malformed files
  auto fail = [&](const std::string& why) {
    return Error(fmt::format("checkpoint '{}' rejected: {}", path, why));
  };
  auto it = f.metadata.find(kFormatKey);
  if (it == f.metadata.end()) throw fail("it is a safetensors file but not an attnlab checkpoint");
  if (it->second != kFormatVersion)
    throw fail(
        fmt::format("format version {} (this build reads version {})", it->second, kFormatVersion));
  auto sum = f.metadata.find("checksum");
  if (sum == f.metadata.end()) throw fail("it has no checksum");
  if (sum->second != checksum(f.tensors, f.metadata))
    throw fail("the checksum does not match its contents (the file is corrupted)");
  return f;
}

CheckpointInfo load_checkpoint(const std::string& path, TrainingState& state) {
  const SafetensorsFile f = read_checkpoint_file(path);
  const Metadata& meta = f.metadata;
  std::vector<std::string> problems;
  auto has = [&](const std::string& k) { return meta.count(k) != 0; };

  CheckpointInfo info;
  try {
    size_t used = 0;
    info.step = std::stoll(meta.at("step"), &used);
    if (used != meta.at("step").size() || info.step < 0) throw std::invalid_argument("step");
  } catch (const std::exception&) {
    problems.push_back("the step is missing or not a whole number >= 0");
  }

  const TensorMap model_tensors = strip_prefix(kModelPrefix, f.tensors);
  const TensorMap optim_tensors = strip_prefix(kOptimPrefix, f.tensors);
  if (state.model) check_model(*state.model, model_tensors, problems);
  if (state.optimizer) {
    if (!has("optim.type"))
      problems.push_back("the file holds no optimizer state");
    else if (meta.at("optim.type") != state.optimizer->type_name())
      problems.push_back(fmt::format("optimizer is {} in the file but {} here",
                                     meta.at("optim.type"), state.optimizer->type_name()));
    else
      try {
        state.optimizer->check_state_dict(optim_tensors);
      } catch (const Error& e) {
        problems.push_back(e.what());
      }
  }
  std::map<std::string, Generator> gens;
  for (const auto& [name, gen] : state.generators) {
    if (!has("rng." + name)) {
      problems.push_back(fmt::format("generator '{}' is not in the file", name));
      continue;
    }
    try {
      gens[name].set_state(meta.at("rng." + name));
    } catch (const Error&) {
      problems.push_back(fmt::format("generator '{}' has a malformed state", name));
    }
  }
  std::optional<data::ExampleStream> stream;
  if (state.stream) {
    if (!has("data.position")) {
      problems.push_back("the file holds no data-stream position");
    } else {
      stream.emplace(*state.stream);
      try {
        stream->set_position(meta.at("data.position"));
      } catch (const Error& e) {
        problems.push_back(e.what());
      }
    }
  }
  if (!problems.empty()) {
    std::string msg = fmt::format("checkpoint '{}' does not fit this run ({} problem{}):", path,
                                  problems.size(), problems.size() == 1 ? "" : "s");
    for (const auto& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
  // Everything is valid: now change things.
  if (state.model) state.model->load_state_dict(model_tensors);
  if (state.optimizer) state.optimizer->load_state_dict(optim_tensors);
  for (auto& [name, gen] : state.generators) *gen = gens.at(name);
  if (state.stream) *state.stream = *stream;
  for (const auto& [k, v] : meta)
    if (k.rfind("extra.", 0) == 0) info.extra[k.substr(6)] = v;
  return info;
}

}  // namespace attn::train
