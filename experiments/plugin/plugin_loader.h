// `--plugin FILE.so` on attnlab list, run and train: load a student's shared library (built with
// ATTN_PLUGIN, nn/mixer/plugin.h) whose mixers, score biases, feature maps and feed-forward blocks
// then run beside the built-ins.
//
//   std::vector<std::string> args = {"run", "attention-zoo", "--plugin", "./gated.so"};
//   std::vector<std::string> files = take_plugin_flags(args);   // args loses the two words
//   load_plugins(files);          // UsageError (exit 2) naming the file, or every row is in
//   nn::mixer_registry().plugin_rows();                      // the rows, gradient-checked
//
// Loading a file, in order (each failure is an attn::UsageError naming the file, before
// anything runs or is written):
//   1. the file exists and dlopen() loads it (a shared library whose every symbol resolves
//      against the attnlab executable, which exports its symbols for this); a static
//      constructor of the plugin that throws is refused the same way (with GCC the exception
//      cannot leave dlopen: a terminate handler names the file and exits with 2);
//   2. it defines `attnlab_plugin_info` (what ATTN_PLUGIN writes);
//   3. its ABI stamp equals this attnlab's (version, plugin API, real type, C++ ABI);
//   4. its registration function returns without throwing, and each row's name is free
//      (not a built-in's, not another plugin's);
//   5. each mixer builds (its factory does not throw) and passes nn::check_mixer_gradient;
//      a failing gradient is a PluginGradientError (exit 1: the plugin loaded, its layer is wrong),
//      naming the file, the row and the worst direction; each score bias's table (4 heads by 64
//      positions, as nn::score_bias_table builds it) is finite (a UsageError naming the row and
//      the entry); each feature map's features of a test batch keep its leading axes and are
//      finite and >= 0 (nn::feature_map_of: a UsageError naming the row and the entry); each
//      feed-forward block builds, returns its input's shape (a UsageError with both shapes
//      otherwise) and passes nn::check_feed_forward_gradient (a PluginGradientError as for
//      mixers).
// Only then are the rows added to nn::mixer_registry(), nn::score_bias_registry(),
// nn::feature_map_registry() and nn::feed_forward_registry(), all of a file's or none.
#pragma once

#include <string>
#include <vector>

#include "autograd/error.h"

namespace attn::nn {
class PluginRegistry;  // nn/mixer/plugin.h
}

namespace attn::experiments {

class PluginGradientError : public Error {
 public:
  explicit PluginGradientError(const std::string& message) : Error(message) {}
};

// Removes every "--plugin FILE" and "--plugin=FILE" from args; returns the files in order.
// A --plugin without a file is a UsageError.
std::vector<std::string> take_plugin_flags(std::vector<std::string>& args);

// Adds the experiments' own mixers (attention-zoo's and linear-zoo's variants, S6) to
// nn::mixer_registry() once, so `--mixer` can name them and no plugin can take their names.
void register_builtin_mixers();

// Steps 4 (the names) and 5 for the rows a plugin's registration function collected, then adds
// them all, or throws and adds none. load_plugins calls it for each file; a test calls it with
// rows made in-process (nn::PluginRegistry("mine.so")).
void add_plugin_rows(const nn::PluginRegistry& plugin);

// register_builtin_mixers(), then loads each file as above.
void load_plugins(const std::vector<std::string>& files);

// The mixer table `attnlab list --plugin ...` appends: every row, its origin and, for plugin
// rows, its gradient check; then the plugins' score biases and feed-forward blocks, if any.
std::string mixer_list_text();

}  // namespace attn::experiments
