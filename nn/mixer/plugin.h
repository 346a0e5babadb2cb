// A student's mixers, positional score biases, linear-attention feature maps and feed-forward
// blocks in a shared library that `attnlab list/run/train --plugin FILE.so` loads.
//
//   #include <attnlab/nn/mixer/plugin.h>
//
//   ATTN_PLUGIN(my_layers) {
//     registry.add_mixer({.name = "gated-softmax",
//                         .source = "my coursework",
//                         .idea = "softmax attention times a sigmoid gate of the input",
//                         .causal = true,
//                         .make = [](const attn::nn::MixerShape& s, int64_t layer,
//                                    attn::Generator& gen) { return make_gated(s, gen); }});
//     registry.add_score_bias({.name = "log-distance", .source = "my coursework",
//                              .idea = "-slope_h log(1 + i - j)", .bias = log_distance});
//     registry.add_feature_map({.name = "relu-squared", .source = "my coursework",
//                               .idea = "relu(x)^2", .phi = relu_squared});
//     registry.add_feed_forward({.name = "reglu", .source = "Shazeer 2020",
//                                .idea = "relu(W x) * (V x) then W2", .make = make_reglu});
//   }
//
// Build it as a MODULE library linked to attnlab::plugin (headers only: the attnlab executable
// already holds attnlab's code, and a second static copy of it inside the plugin would carry a
// second, empty registry); examples/coursework/CMakeLists.txt does this.
//
// ATTN_PLUGIN defines the one C symbol the loader looks for, `attnlab_plugin_info`, returning
// the plugin's name, its ABI stamp and its registration function. The stamp is read first and
// must equal the loading attnlab's: the same attnlab version, plugin API, real type and C++ ABI
// (a plugin built against another attnlab would otherwise call functions whose layout it does
// not know). Then the registration function runs; every mixer it adds is built and passes the
// gradient check of nn/mixer/mixer_check.h before anything trains it, and every score bias
// (nn/positional/score_bias_registry.h: a fixed positional bias, nothing to train) must give
// finite values on a test grid; every feature map (nn/attention/feature_map_registry.h: no
// parameters either) must give finite, non-negative features of the right shape on a test batch;
// every feed-forward block (nn/feedforward_registry.h) is built and passes the same kind of
// gradient check as a mixer.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nn/attention/feature_map_registry.h"
#include "nn/feedforward_registry.h"
#include "nn/mixer/mixer_registry.h"
#include "nn/positional/score_bias_registry.h"

// attnlab::plugin defines ATTN_PLUGIN_VERSION (the installed attnlab's version). Without it,
// ATTN_PLUGIN fails to compile with this name in the message:
#ifndef ATTN_PLUGIN_VERSION
#define ATTN_PLUGIN_VERSION link_the_plugin_with_attnlab_plugin_it_defines_ATTN_PLUGIN_VERSION
#endif

#define ATTN_PLUGIN_STR2(x) #x
#define ATTN_PLUGIN_STR(x) ATTN_PLUGIN_STR2(x)
#ifdef ATTN_REAL_DOUBLE
#define ATTN_PLUGIN_REAL "double"
#else
#define ATTN_PLUGIN_REAL "float"
#endif
// Everything of the stamp but the version: bump "plugin api" when PluginRegistry, MixerRow,
// MixerShape, Mixer, ScoreBiasRow, FeatureMapRow, FeedForwardRow or FeedForwardBlock change
// layout (2: score biases; 3: feature maps and feed-forward blocks).
#define ATTN_PLUGIN_ABI_REST                                             \
  "; plugin api 3; real " ATTN_PLUGIN_REAL "; g++ abi " ATTN_PLUGIN_STR( \
      __GXX_ABI_VERSION) "; cxx11 strings " ATTN_PLUGIN_STR(_GLIBCXX_USE_CXX11_ABI)
#define ATTN_PLUGIN_ABI_STAMP "attnlab " ATTN_PLUGIN_VERSION ATTN_PLUGIN_ABI_REST

namespace attn::nn {

// The stamp a plugin must carry to load into an attnlab of this version.
inline std::string plugin_abi_stamp(const std::string& version) {
  return "attnlab " + version + ATTN_PLUGIN_ABI_REST;
}

// What the plugin's registration function receives: rows are collected here, then checked and
// added to mixer_registry() by the loader (all of a plugin's rows or none).
class PluginRegistry {
 public:
  explicit PluginRegistry(std::string file) : file_(std::move(file)) {}
  void add_mixer(MixerRow row) {
    row.origin = file_;
    mixers_.push_back(std::move(row));
  }
  void add_score_bias(ScoreBiasRow row) {
    row.origin = file_;
    score_biases_.push_back(std::move(row));
  }
  void add_feature_map(FeatureMapRow row) {
    row.origin = file_;
    feature_maps_.push_back(std::move(row));
  }
  void add_feed_forward(FeedForwardRow row) {
    row.origin = file_;
    feed_forwards_.push_back(std::move(row));
  }
  const std::string& file() const { return file_; }
  const std::vector<MixerRow>& mixers() const { return mixers_; }
  const std::vector<ScoreBiasRow>& score_biases() const { return score_biases_; }
  const std::vector<FeatureMapRow>& feature_maps() const { return feature_maps_; }
  const std::vector<FeedForwardRow>& feed_forwards() const { return feed_forwards_; }
  bool empty() const {
    return mixers_.empty() && score_biases_.empty() && feature_maps_.empty() &&
           feed_forwards_.empty();
  }

 private:
  std::string file_;
  std::vector<MixerRow> mixers_;
  std::vector<ScoreBiasRow> score_biases_;
  std::vector<FeatureMapRow> feature_maps_;
  std::vector<FeedForwardRow> feed_forwards_;
};

}  // namespace attn::nn

// C layout: the loader reads abi_stamp before it trusts anything else.
struct AttnPluginInfo {
  const char* abi_stamp;
  const char* name;
  void (*register_rows)(attn::nn::PluginRegistry& registry);
};

#define ATTN_PLUGIN(plugin_name)                                                                  \
  static void attn_plugin_register_##plugin_name(::attn::nn::PluginRegistry& registry);           \
  extern "C" __attribute__((visibility("default"))) const AttnPluginInfo* attnlab_plugin_info() { \
    static const AttnPluginInfo info{ATTN_PLUGIN_ABI_STAMP, #plugin_name,                         \
                                     &attn_plugin_register_##plugin_name};                        \
    return &info;                                                                                 \
  }                                                                                               \
  static void attn_plugin_register_##plugin_name(::attn::nn::PluginRegistry& registry)
