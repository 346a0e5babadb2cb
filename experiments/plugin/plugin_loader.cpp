#include "experiments/plugin/plugin_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>

#include "autograd/build_info.h"
#include "autograd/generator.h"
#include "autograd/tape.h"
#include "experiments/common/ssm_mixer.h"
#include "experiments/common/zoo_variants.h"
#include "experiments/report/table.h"
#include "nn/mixer/mixer_check.h"
#include "nn/mixer/plugin.h"

namespace attn::experiments {

namespace {

// The check results of the loaded rows, for the listing: row name -> worst |a - n| / tolerance.
std::map<std::string, double>& checked_rows() {
  static std::map<std::string, double> rows;
  return rows;
}

// Runs `work`; an exception from the plugin's code becomes a UsageError "<who> threw <when>: ...".
template <class Work>
void plugin_code(const std::string& who, const std::string& when, Work&& work) {
  try {
    work();
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("{} threw {}: {}", who, when, e.what()));
  } catch (...) {
    throw UsageError(fmt::format("{} threw a non-std exception {}", who, when));
  }
}

// The same for the loaded feed-forward blocks (a block may share a mixer's name).
std::map<std::string, double>& checked_blocks() {
  static std::map<std::string, double> rows;
  return rows;
}

// The file dlopen is loading, for the terminate handler below.
std::string& file_being_opened() {
  static std::string file;
  return file;
}

std::string static_throw_message(const std::string& file, const std::string& what) {
  return fmt::format("--plugin {}: a static constructor threw while the library loaded: {}", file,
                     what);
}

// dlopen runs the plugin's static constructors. An exception one of them throws crosses the
// dynamic loader's frames and is caught below; where the runtime cannot pass it through, it
// calls std::terminate (exit 134, "terminate called after throwing ..."), and the handler set
// here takes over. Both end as every other refused plugin does: exit 2 naming the file and the
// exception, nothing written (plugins load before any run folder exists).
void* dlopen_naming_throws(const std::string& file, const std::string& path) {
  file_being_opened() = file;
  const std::terminate_handler previous = std::set_terminate([] {
    std::string what = "a non-std exception";
    try {
      if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    std::fprintf(stderr, "attnlab: %s\n", static_throw_message(file_being_opened(), what).c_str());
    std::fflush(stderr);
    std::_Exit(2);
  });
  // glibc declares dlopen noexcept, so a compiler drops a handler around a call it knows is
  // dlopen (clang did, through a const pointer too: the exception flew past to main, exit 1). A
  // volatile pointer hides the callee, so the handler stays.
  static void* (*volatile open_library)(const char*, int) = ::dlopen;
  void* handle = nullptr;
  try {
    handle = open_library(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  } catch (const std::exception& e) {
    std::set_terminate(previous);
    throw UsageError(static_throw_message(file, e.what()));
  } catch (...) {
    std::set_terminate(previous);
    throw UsageError(static_throw_message(file, "a non-std exception"));
  }
  std::set_terminate(previous);
  return handle;
}

// Steps 1-3 of plugin_loader.h: the library, its symbol, its stamp.
const AttnPluginInfo& open_plugin(const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw UsageError(fmt::format("--plugin {}: no such file", file));
  // A name without '/' would be searched for on the library path, not in this folder.
  const std::string path = file.find('/') == std::string::npos ? "./" + file : file;
  // RTLD_NOW: an attnlab symbol the plugin needs but this executable lacks fails here, by name.
  void* handle = dlopen_naming_throws(file, path);
  if (!handle)
    throw UsageError(
        fmt::format("--plugin {}: not a shared library attnlab can load: {}", file, ::dlerror()));
  using InfoFn = const AttnPluginInfo* (*)();
  auto info_fn = reinterpret_cast<InfoFn>(::dlsym(handle, "attnlab_plugin_info"));
  if (!info_fn)
    throw UsageError(
        fmt::format("--plugin {}: no attnlab_plugin_info symbol: define the plugin "
                    "with ATTN_PLUGIN(name) {{ ... }} (attnlab/nn/mixer/plugin.h)",
                    file));
  const AttnPluginInfo* info = info_fn();
  const std::string expected = nn::plugin_abi_stamp(version());
  if (!info || !info->abi_stamp || expected != info->abi_stamp)
    throw UsageError(
        fmt::format("--plugin {}: built against another attnlab: its stamp is '{}', "
                    "this attnlab needs '{}'; rebuild the plugin against this "
                    "attnlab's installation",
                    file, info && info->abi_stamp ? info->abi_stamp : "(none)", expected));
  // The handle stays open for the life of the process: the rows hold the plugin's code.
  return *info;
}

// Step 4: the plugin's rows, collected by its registration function.
nn::PluginRegistry registered_rows(const std::string& file, const AttnPluginInfo& info) {
  nn::PluginRegistry registry(file);
  plugin_code(fmt::format("--plugin {}: ATTN_PLUGIN({})", file, info.name), "while registering",
              [&] { info.register_rows(registry); });
  if (registry.empty())
    throw UsageError(
        fmt::format("--plugin {}: ATTN_PLUGIN({}) added no rows (call registry.add_mixer(...), "
                    "registry.add_score_bias(...), registry.add_feature_map(...) or "
                    "registry.add_feed_forward(...))",
                    file, info.name));
  return registry;
}

// Step 5 for a score bias: a fixed table has no gradient to check, but its table for 4 heads over
// 64 positions, built as a model builds it (nn::score_bias_table, causal), must be finite.
void check_score_bias(const std::string& file, const nn::ScoreBiasRow& row) {
  plugin_code(fmt::format("--plugin {}", file), "while its table was computed",
              [&] { nn::score_bias_table(row, /*nhead=*/4, /*tq=*/64, /*tk=*/64); });
}

// Step 5 for a feature map: no parameters to gradient-check (it is read, not trained), but on
// a test batch of queries shaped as linear-vs-softmax-recall's keys (1 batch, 2 heads, 8
// positions, 16 dimensions, entries of variance 1) its features must keep the leading axes and
// be finite and >= 0 (nn::feature_map_of, the call every reader makes).
void check_feature_map(const std::string& file, const nn::FeatureMapRow& row) {
  Generator gen(11);
  const Var x = Var::constant(Tensor::randn({1, 2, 8, 16}, gen));
  plugin_code(fmt::format("--plugin {}", file), "while its features were computed", [&] {
    NoGrad off;
    nn::feature_map_of(row, x);
  });
}

// Adds each row to `trial`, the registry's copy, naming the file in a refusal.
template <class Registry, class Row>
void add_all(Registry& trial, const std::vector<Row>& rows, const std::string& file) {
  for (const Row& row : rows) {
    try {
      trial.add(row);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("--plugin {}: {}", file, e.what()));
    }
  }
}

// Step 5: the row builds and its gradient is right.
double checked(const std::string& file, const nn::MixerRow& row) {
  nn::MixerCheck c;
  plugin_code(fmt::format("--plugin {}: mixer '{}'", file, row.name), "while being built or run",
              [&] { c = nn::check_mixer_gradient(row); });
  if (!c.ok)
    throw PluginGradientError(fmt::format(
        "--plugin {}: mixer '{}' failed its gradient check, so nothing trains it: {} "
        "(nn/mixer/mixer_check.h; prove the backward in double precision with attnlab_f64, as "
        "examples/coursework/check_gradients.cpp does)",
        file, row.name, c.detail));
  return c.worst_ratio;
}

// Step 5 for a feed-forward block: it builds, keeps its input's shape, and its gradient is right.
double checked(const std::string& file, const nn::FeedForwardRow& row) {
  nn::FloatGradientCheck c;
  plugin_code(fmt::format("--plugin {}: feed-forward '{}'", file, row.name),
              "while being built or run", [&] { c = nn::check_feed_forward_gradient(row); });
  if (c.wrong_shape) throw UsageError(fmt::format("--plugin {}: {}", file, c.detail));
  if (!c.ok)
    throw PluginGradientError(fmt::format(
        "--plugin {}: feed-forward '{}' failed its gradient check, so nothing trains it: {} "
        "(nn/float_gradient_check.h)",
        file, row.name, c.detail));
  return c.worst_ratio;
}

}  // namespace

void add_plugin_rows(const nn::PluginRegistry& plugin) {
  const std::string& file = plugin.file();
  nn::MixerRegistry mixers = nn::mixer_registry();  // all of the file's rows, or none
  nn::ScoreBiasRegistry biases = nn::score_bias_registry();
  nn::FeatureMapRegistry feature_maps = nn::feature_map_registry();
  nn::FeedForwardRegistry blocks = nn::feed_forward_registry();
  add_all(mixers, plugin.mixers(), file);
  add_all(biases, plugin.score_biases(), file);
  add_all(feature_maps, plugin.feature_maps(), file);
  add_all(blocks, plugin.feed_forwards(), file);
  std::map<std::string, double> ratios, block_ratios;
  for (const nn::MixerRow& row : plugin.mixers()) ratios[row.name] = checked(file, row);
  for (const nn::ScoreBiasRow& row : plugin.score_biases()) check_score_bias(file, row);
  for (const nn::FeatureMapRow& row : plugin.feature_maps()) check_feature_map(file, row);
  for (const nn::FeedForwardRow& r : plugin.feed_forwards())
    block_ratios[r.name] = checked(file, r);
  nn::mixer_registry() = mixers;
  nn::score_bias_registry() = biases;
  nn::feature_map_registry() = feature_maps;
  nn::feed_forward_registry() = blocks;
  checked_rows().insert(ratios.begin(), ratios.end());
  checked_blocks().insert(block_ratios.begin(), block_ratios.end());
}

std::vector<std::string> take_plugin_flags(std::vector<std::string>& args) {
  std::vector<std::string> files, rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--plugin=", 0) == 0) {
      files.push_back(args[i].substr(9));
    } else if (args[i] == "--plugin") {
      if (i + 1 == args.size() || args[i + 1].empty() || args[i + 1].rfind("--", 0) == 0)
        throw UsageError("--plugin needs a file: --plugin PATH.so");
      files.push_back(args[++i]);
    } else {
      rest.push_back(args[i]);
    }
  }
  for (const std::string& f : files)
    if (f.empty()) throw UsageError("--plugin needs a file: --plugin PATH.so");
  args = rest;
  return files;
}

void register_builtin_mixers() {
  static const bool done = [] {
    nn::MixerRegistry& r = nn::mixer_registry();
    std::vector<ZooVariant> zoo = zoo_projection_variants();
    for (ZooVariant& v : zoo_recurrent_variants()) zoo.push_back(std::move(v));
    for (ZooVariant& v : zoo_linear_variants()) zoo.push_back(std::move(v));
    for (const ZooVariant& v : zoo)
      if (!r.find(v.name)) r.add(v);  // softmax and linear are nn's own rows already
    r.add({"S6", "002 (Mamba's selective state space)",
           "input-dependent decay of a fixed-size state per channel (d_state 16): O(T)", true,
           [](const nn::MixerShape& s, int64_t, Generator& g) {
             return s6_mixer(s.d_model, /*d_state=*/16, g);
           }});
    return true;
  }();
  (void)done;
}

void load_plugins(const std::vector<std::string>& files) {
  register_builtin_mixers();
  for (const std::string& f : files) add_plugin_rows(registered_rows(f, open_plugin(f)));
}

namespace {

// The plugins' score biases, when any loaded (none is built in: the built-in schemes are
// PositionKinds, listed by length-extrapolation's --help).
std::string score_bias_list_text() {
  const auto& rows = nn::score_bias_registry().rows();
  if (rows.empty()) return "";
  Table t("", {"score bias", "from", "values", "idea"});
  for (const nn::ScoreBiasRow& r : rows)
    t.add_row({r.name, r.origin.empty() ? "built in" : r.origin, "finite (checked)", r.idea});
  return "\nPositional score biases (length-extrapolation runs them as --variants beside the "
         "built-in schemes):\n" +
         t.text();
}

// The plugins' feature maps, when any loaded.
std::string feature_map_list_text() {
  const auto& rows = nn::feature_map_registry().rows();
  if (rows.empty()) return "";
  Table t("", {"feature map", "from", "features", "idea"});
  for (const nn::FeatureMapRow& r : rows)
    t.add_row({r.name, r.origin.empty() ? "built in" : r.origin, "finite, >= 0 (checked)", r.idea});
  return "\nLinear-attention feature maps (linear-vs-softmax-recall reads them beside softmax, "
         "elu + 1 and the power map):\n" +
         t.text();
}

// The plugins' feed-forward blocks, when any loaded (the built-in blocks are the activations
// relu, gelu, gelu_tanh, swiglu).
std::string feed_forward_list_text() {
  const auto& rows = nn::feed_forward_registry().rows();
  if (rows.empty()) return "";
  Table t("", {"feed-forward", "from", "gradient check", "idea"});
  for (const nn::FeedForwardRow& r : rows) {
    const auto c = checked_blocks().find(r.name);
    const std::string check =
        c == checked_blocks().end()
            ? "not checked"
            : fmt::format("passed (worst {:.2f} of the tolerance)", c->second);
    t.add_row({r.name, r.origin.empty() ? "built in" : r.origin, check, r.idea});
  }
  return "\nFeed-forward blocks (ffn-memory runs them beside the built-in block; attnlab train "
         "--model gpt --ffn_block NAME trains any):\n" +
         t.text();
}

}  // namespace

std::string mixer_list_text() {
  Table t("", {"mixer", "from", "causal", "gradient check", "idea"});
  for (const nn::MixerRow& r : nn::mixer_registry().rows()) {
    const auto c = checked_rows().find(r.name);
    const std::string check =
        r.origin.empty() ? "built in (tests)"
                         : fmt::format("passed (worst {:.2f} of the tolerance)", c->second);
    t.add_row(
        {r.name, r.origin.empty() ? "built in" : r.origin, r.causal ? "yes" : "no", check, r.idea});
  }
  return "\nMixers (attention-zoo runs the plugin rows beside its own variants; "
         "attnlab train --model mixer --mixer NAME trains any):\n" +
         t.text() + score_bias_list_text() + feature_map_list_text() + feed_forward_list_text();
}

}  // namespace attn::experiments
